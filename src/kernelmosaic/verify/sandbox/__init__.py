"""Holds only the worker package `kmworker`: this folder alone goes on the workers' `sys.path`, so no module of
the trusted side (or any name that shadows the standard library) is importable inside a worker."""

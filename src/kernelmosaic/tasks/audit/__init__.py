"""Task audits: a parent-side runner and an isolated worker (standard library + torch only).

Kept import-free on purpose: the worker is started as `python -m kernelmosaic.tasks.audit.worker`.
"""

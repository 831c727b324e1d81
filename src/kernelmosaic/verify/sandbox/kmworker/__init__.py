"""The verifier's worker side: runs untrusted candidates and the problem's reference in separate processes.

Imports only the standard library and torch (Triton when a candidate uses it), so it starts fast on a bare GPU
image. It is launched as the top-level package `kmworker` (see `kernelmosaic.verify.pool`), never imported by
the trusted parent's judging code.
"""

"""Only a build that ran to completion and was refused by the compiler is cached as failed (issue 10): a build killed
by a signal, starved of memory or disk, or interrupted is retried next time."""

from __future__ import annotations

import subprocess

from kernelmosaic.verify.sandbox.kmworker.loader import diagnosed_failure


def _failed(returncode: int) -> RuntimeError:
    try:
        try:
            raise subprocess.CalledProcessError(returncode, ["ninja", "-v"])
        except subprocess.CalledProcessError as exc:
            raise RuntimeError("Error building extension 'x'") from exc
    except RuntimeError as err:
        return err


DIAGNOSIS = "main.cpp:3:5: error: 'foo' was not declared in this scope\nninja: build stopped: subcommand failed."


def test_a_compiler_diagnosis_is_cached():
    assert diagnosed_failure(_failed(1), DIAGNOSIS)


def test_a_killed_or_starved_compiler_is_not():
    assert not diagnosed_failure(_failed(1), "c++: fatal error: Killed signal terminated program cc1plus\n"
                                             "compilation terminated.\nmain.cpp:1: error: x")
    assert not diagnosed_failure(_failed(1), "cc1plus: out of memory allocating 65536 bytes\nerror: x")
    assert not diagnosed_failure(_failed(1), "virtual memory exhausted: Cannot allocate memory")
    assert not diagnosed_failure(_failed(-9), DIAGNOSIS)  # ninja itself was killed


def test_a_failure_without_a_finished_build_is_not():
    assert not diagnosed_failure(RuntimeError("ninja not found"), DIAGNOSIS)
    assert not diagnosed_failure(None, DIAGNOSIS)
    assert not diagnosed_failure(_failed(1), "ninja: build stopped: interrupted by user.")

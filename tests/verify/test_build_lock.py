"""A build killed half-way (a builder past its timeout) leaves torch's `lock` file in its build directory, and torch
waits on that file forever (seen 2026-12-01: a whole evaluation run of one extension ended as load errors). The
loader holds its own flock around torch's build and removes a `lock` that no live builder can own; a folder whose
build never finished is not published, so nothing loads from it and the next builder builds it again."""

from __future__ import annotations

import pytest

from kernelmosaic.verify import Verifier, VerifyConfig

from .kit import PROBLEM_ADD_RELU, candidate, write

pytestmark = pytest.mark.slow


def test_a_lock_left_by_a_killed_build_does_not_stop_later_loads(build_cache, tmp_path):
    config = VerifyConfig(device="cpu", trials=2, cache_dir=build_cache, timing=False, run_timeout_s=8,
                          load_timeout_s=30, memory_limit_gb=8)
    problem = write(tmp_path, "problem.py", PROBLEM_ADD_RELU)
    cand = write(tmp_path, "candidate.py",
                 candidate("return ext.add_relu(a, b)").replace("km_test_ext", "km_stale_lock_ext"))
    with Verifier(config) as verifier:
        first = verifier.verify(problem, cand)
        assert first.accepted, first.message
        (build_dir,) = build_cache.glob("km_stale_lock_ext_*")
        (build_dir / "lock").touch()  # what torch leaves when its builder is killed inside the build...
        (build_dir / "km_published").unlink()  # ...before the build was published
        for built in build_dir.glob("*.so"):
            built.unlink()
        again = verifier.verify(problem, cand)
    assert again.accepted, again.message  # before the fix: load_error after the 30 s load timeout
    assert not (build_dir / "lock").exists()
    assert (build_dir / "km_published").is_file() and list(build_dir.glob("*.so"))  # built and published again

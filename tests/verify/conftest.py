import os
from pathlib import Path

import pytest

from kernelmosaic.verify import Verifier, VerifyConfig


@pytest.fixture(scope="session")
def build_cache(tmp_path_factory):
    shared = os.environ.get("KERNELMOSAIC_CACHE")  # scripts/gpu/gpu-check shares one cache with its benchmark
    return Path(shared) if shared else tmp_path_factory.mktemp("build-cache")


@pytest.fixture(scope="session")
def cpu_verifier(build_cache):
    config = VerifyConfig(device="cpu", trials=3, cache_dir=build_cache, timing_budget_ms=20, timing_rounds=2,
                          compile_baseline=False, run_timeout_s=8, memory_limit_gb=8)
    with Verifier(config) as verifier:
        yield verifier

"""One local Ray instance for the scale tests, with two logical GPUs on a CPU machine (each judge is pinned to one
and judges on the CPU device), and one build cache, so the suite pays for one C++ build."""

from __future__ import annotations

import pytest

ray = pytest.importorskip("ray", reason="the [ray] extra is not installed")


@pytest.fixture(scope="session")
def ray_cluster():
    ray.init(num_cpus=2, num_gpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()


@pytest.fixture(scope="session")
def scale_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("scale-build-cache")

"""The tests folder itself is importable from every test folder: kits shared by several of them live here."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # for `cpp_kit` (the folders' own kits are found beside their tests)


@pytest.fixture(scope="session", autouse=True)
def _private_build_cache(tmp_path_factory):
    """Every test session builds into a cache of its own (unless KERNELMOSAIC_CACHE names one, as scripts/gpu-check
    does): two test runs on one machine must not share build directories, whose half-finished builds the other
    run would then wait on."""
    if os.environ.get("KERNELMOSAIC_CACHE"):
        yield
        return
    os.environ["KERNELMOSAIC_CACHE"] = str(tmp_path_factory.mktemp("km-cache") / "build")
    try:
        yield
    finally:
        os.environ.pop("KERNELMOSAIC_CACHE", None)

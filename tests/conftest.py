"""The tests folder itself is importable from every test folder: kits shared by several of them live here."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # for `cpp_kit`, `xdist_scopes` (folders' own kits are beside their tests)


@pytest.hookimpl(optionalhook=True)  # optional: `-p no:xdist` runs without the plugin
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist_scopes import CostFirstScheduling

    return CostFirstScheduling(config, log)


@pytest.fixture(scope="session", autouse=True)
def _private_build_cache(tmp_path_factory):
    """Every test session builds into a cache of its own (unless KERNELMOSAIC_CACHE names one, as scripts/gpu/gpu-check
    does): two test runs on one machine must not share build directories, whose half-finished builds the other
    run would then wait on."""
    if os.environ.get("KERNELMOSAIC_CACHE"):
        yield
        return
    # pytest-xdist's workers of one run share it (their base folders' parent is the run's): builds are keyed on
    # their source and each build directory is locked while it builds, so a worker waits for another's build
    # instead of repeating it.
    base = tmp_path_factory.getbasetemp()
    run_root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    os.environ["KERNELMOSAIC_CACHE"] = str(run_root / "km-cache" / "build")
    try:
        yield
    finally:
        os.environ.pop("KERNELMOSAIC_CACHE", None)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """With KM_STACKS_AFTER_S set (scripts/gpu/gpu-check sets it below the per-test limit): a test still running that
    long writes where it waits, its workers' stacks included (`stuck.dump`), before pytest-timeout ends it."""
    after = float(os.environ.get("KM_STACKS_AFTER_S") or 0)
    if after <= 0:
        yield
        return
    import threading

    from stuck import dump

    timer = threading.Timer(after, dump, args=(item.nodeid, os.environ.get("KM_STACKS_FILE")))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()

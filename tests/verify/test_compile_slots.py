"""How many compiles run ahead of judgement (`VerifyConfig.lookahead_slots`): as many as the host's cores and memory
hold, with no fixed cap; a C++ (CPU) build counts one core, a CUDA build two; `lookahead` overrides it."""

from __future__ import annotations

import pytest

from kernelmosaic.verify import config as config_module
from kernelmosaic.verify.config import VerifyConfig


@pytest.mark.parametrize(("device", "cores", "gib", "want"), [
    ("cuda", 16, 128.0, 8),  # the H200 host: bound by its cores
    ("cuda", 64, 512.0, 32),  # a larger host is not held to eight
    ("cuda", 64, 24.0, 12),  # little memory: bound by it (2 GiB a compile)
    ("cpu", 2, 24.0, 2),  # a C++ extension is one unit: both cores build
    ("cpu", 1, 1.0, 1),  # never none
])
def test_compiles_in_flight_follow_cores_and_memory(monkeypatch, device, cores, gib, want):
    monkeypatch.setattr(config_module.os, "cpu_count", lambda: cores)
    monkeypatch.setattr(config_module, "host_memory_gib", lambda: gib)
    assert VerifyConfig(device=device).lookahead_slots() == want


def test_settings_override_the_count(monkeypatch):
    monkeypatch.setattr(config_module.os, "cpu_count", lambda: 16)
    monkeypatch.setattr(config_module, "host_memory_gib", lambda: 128.0)
    assert VerifyConfig(device="cuda", lookahead=3).lookahead_slots() == 3
    assert VerifyConfig(device="cuda", compile_jobs=4).lookahead_slots() == 4
    assert VerifyConfig(device="cuda", compile_memory_gib=32.0).lookahead_slots() == 4

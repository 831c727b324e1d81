"""The timer's lead kernel: sized from the host's measured enqueue time, never below the configured floor."""

from __future__ import annotations

import torch

from kernelmosaic.verify.sandbox.kmworker.timing import _MAX_LEAD_US, Timer


def _timer(lead_us: float, cycles_per_us: float = 1000.0) -> Timer:
    timer = Timer("cpu", 0)
    timer.lead_us = lead_us  # on the CPU the lead is off; the sizing rule itself is device-independent
    timer._cycles_per_us = lambda: cycles_per_us
    return timer


def test_fast_enqueue_keeps_the_floor():
    timer = _timer(50.0)
    assert timer._set_lead([0.010] * 10 + [0.500]) == 50.0  # the one slow enqueue is above the 90th percentile
    assert timer.lead_cycles == 50_000


def test_slow_enqueue_stretches_the_lead_to_twice_its_90th_percentile():
    timer = _timer(50.0, cycles_per_us=1980.0)
    lead = timer._set_lead([0.100] * 20)
    assert abs(lead - 200.0) < 1e-6
    assert timer.lead_cycles == int(200.0 * 1980.0)


def test_the_lead_is_capped_and_zero_means_off():
    assert _timer(50.0)._set_lead([100.0] * 5) == _MAX_LEAD_US
    off = _timer(0.0)
    assert off._set_lead([1.0] * 5) == 0.0 and off.lead_cycles == 0


def test_cpu_timer_has_no_lead_and_reports_escaped_only_when_asked():
    timer = Timer("cpu", 0, lead_us=50.0)
    assert timer.lead_us == 0.0
    x = torch.ones(1000)
    got = timer.measure(lambda a: a + 1, lambda seed: [x], budget_ms=2.0, escaped=False)
    assert got["escaped_ms"] is None and got["lead_us"] == 0.0 and len(got["samples"]) >= 5
    assert timer.measure(lambda a: a + 1, lambda seed: [x], budget_ms=2.0)["escaped_ms"] == 0.0


def test_calls_whose_enqueue_outlasted_the_lead_are_counted():
    from kernelmosaic.verify.sandbox.kmworker.timing import lead_short

    # a 100 µs lead: enqueues of 30 and 99 µs are covered; 101 µs and 2 ms are not (the device idled before them)
    assert lead_short([0.030, 0.099, 0.101, 2.0], 100.0) == 2
    assert lead_short([5.0], 0.0) == 0, "no lead (CPU, or turned off): nothing to outlast"

"""How many timed calls a subject gets: its own time budget, bounded by the host wall time its calls may take
(`full`: four times the budget; `quick`: the budget itself, so an agent's iteration stays short)."""

from __future__ import annotations

from kernelmosaic.verify import VerifyConfig
from kernelmosaic.verify.baselines import baseline_key
from kernelmosaic.verify.sandbox.kmworker.timing import repetitions


def test_a_slow_kernel_is_bounded_by_its_own_time_and_a_fast_one_by_wall_time():
    # 2 ms a call: the budget of its own time decides (400 ms -> 200 calls), whatever the wall allowance
    assert repetitions(400.0, 1600.0, est_ms=2.0, call_wall_ms=2.5) == 200
    # 3 µs a call, but 0.1 ms of wall each (flush, lead, fresh inputs): the wall allowance decides
    assert repetitions(400.0, 1600.0, est_ms=0.003, call_wall_ms=0.1) == 2000  # capped
    assert repetitions(150.0, 150.0, est_ms=0.003, call_wall_ms=0.1) == 1500
    assert repetitions(150.0, 150.0, est_ms=0.003, call_wall_ms=0.5) == 300
    # never fewer than 5, however slow
    assert repetitions(150.0, 150.0, est_ms=500.0, call_wall_ms=600.0) == 5


def test_quick_bounds_wall_time_by_its_budget_and_full_by_four_times_it(tmp_path):
    full = VerifyConfig(device="cpu", cache_dir=tmp_path, timing_budget_ms=400.0, timing_rounds=3)
    quick = full.model_copy(update={"timing_profile": "quick", "quick_budget_ms": 150.0})
    assert (full.timing_plan(), full.timing_wall_ms()) == ((3, 400.0), 1600.0)
    assert (quick.timing_plan(), quick.timing_wall_ms()) == ((1, 150.0), 150.0)
    env = {"hostname": "h", "torch": "t"}
    assert baseline_key("sha", env, "cpu", full) != baseline_key("sha", env, "cpu", quick)


def test_the_cpu_device_gets_its_short_plan_where_the_settings_give_none(tmp_path):
    """Host timing on the CPU is indicative: `verify`, the agent, `evaluate` and the Python API all start from
    `CPU_TIMING` there; what the settings give wins; CUDA keeps the full plan."""
    assert VerifyConfig(device="cpu", cache_dir=tmp_path).timing_plan() == (2, 25.0)
    assert VerifyConfig.model_validate({"device": "cpu", "timing_rounds": 4}).timing_plan() == (4, 25.0)
    assert VerifyConfig(device="cpu", timing_budget_ms=100.0).timing_plan() == (2, 100.0)
    assert VerifyConfig(device="cuda").timing_plan() == (3, 400.0)

"""Which verifier settings weaken the checks, what a verdict records of its settings, and what the service allows.

The rule, one table per kind of setting (docs/threat-model.md, "settings"):
- *checks* (`CHECKS`): a setting that switches a check off or loosens its threshold. Lower than the defaults (fewer
  trials, fewer timed calls checked, looser tolerances, a static policy that allows more, a check off) weakens the
  verdict: it is recorded in `Verdict.settings.weakened` and such a verdict is never *verified*
  (contracts/verified.py). Correctness trials are the one exception to "the default is the floor": 3 or more keep a
  verdict verifiable (CPU runs judge with 3 for speed); fewer weaken it. The verifier service refuses a request
  whose checks are weaker than the service's own settings, and the client then judges in its own process.
- *judgement* choices (precision, policy, timing on or off and its profile and budget, the torch.compile baseline,
  the seed): what to judge, not how strictly. Every verdict records its policy, precision, seed and timing profile;
  a verdict that was not timed with the `full` profile is not verified anyway.
- *service* settings (`SERVICE_OWNED`: where builds go, worker counts, limits and timeouts): the service keeps its own
  and records the names it kept (`Verdict.settings.service_kept`); a request for another build cache is refused.

Every setting that differs from VerifyConfig's defaults is recorded in `Verdict.settings.changed`, except the seed
(random by default, recorded as `correctness.seed`), the device (`env.device`), the build cache and `use_service`.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from kernelmosaic.contracts.verdict import SettingsUsed
from kernelmosaic.verify.config import VerifyConfig

__all__ = ["CHECKS", "SERVICE_OWNED", "VERIFIED_MIN_TRIALS", "weaker", "settings_used", "service_view"]

VERIFIED_MIN_TRIALS = 3
"""Fewest correctness trials a verifiable verdict rests on."""

SERVICE_OWNED = ("cache_dir", "lookahead", "compile_jobs", "compile_memory_gib", "compile_nice", "split_nvcc", "lean_cuda_units",
                 "split_cuda_units", "lean_binding_units",
                 "judges_per_gpu",
                 "spare_workers", "yield_to_timing_s", "memory_limit_gb", "host_rss_limit_gb", "compile_timeout_s",
                 "load_timeout_s", "init_timeout_s", "run_timeout_s", "timing_timeout_s", "sanitize_timeout_s",
                 "use_service")
"""The service's own: its build cache, its workers and their limits."""

_NOT_RECORDED = ("seed", "device", "cache_dir", "use_service")
_ORDER = {"allow": 0, "flag": 1, "reject": 2}


def _at_least(name: str) -> Callable[[VerifyConfig, VerifyConfig], str | None]:
    def check(config: VerifyConfig, floor: VerifyConfig) -> str | None:
        asked, least = getattr(config, name), getattr(floor, name)
        return f"{name}={json.dumps(asked)} (at least {json.dumps(least)})" if asked < least else None
    return check


def _tolerance(config: VerifyConfig, floor: VerifyConfig) -> str | None:
    (atol, rtol), (fa, fr) = config.tolerances(), floor.tolerances(config.precision)
    if atol > fa or rtol > fr:
        return f"atol={atol:g}, rtol={rtol:g} (at most {fa:g}, {fr:g} for {config.precision})"
    return None


def _static(config: VerifyConfig, floor: VerifyConfig) -> str | None:
    mine, least = config.static, floor.static
    loose = []
    if _ORDER[mine.torch_compute] < _ORDER[least.torch_compute]:
        loose.append(f"torch_compute={mine.torch_compute}")
    for name in ("allowed_torch_ops", "allowed_imports", "allowed_env_writes"):
        extra = sorted(set(getattr(mine, name)) - set(getattr(least, name)))
        if extra:
            loose.append(f"{name} adds {', '.join(extra)}")
    if mine.allow_triton and not least.allow_triton:
        loose.append("allow_triton=true")
    if mine.allow_streams and not least.allow_streams:
        loose.append("allow_streams=true")
    for rule in sorted(set(mine.severity) | set(least.severity)):
        if _ORDER[mine.action(rule)] < _ORDER[least.action(rule)]:
            loose.append(f"severity.{rule}={mine.action(rule)}")
    return f"static: {'; '.join(loose)}" if loose else None


def _on(name: str) -> Callable[[VerifyConfig, VerifyConfig], str | None]:
    def check(config: VerifyConfig, floor: VerifyConfig) -> str | None:
        return f"{name}=false" if getattr(floor, name) and not getattr(config, name) else None
    return check


CHECKS: dict[str, Callable[[VerifyConfig, VerifyConfig], str | None]] = {
    "static_checks": _on("static_checks"),
    "memory_watch": _on("memory_watch"),
    "static": _static,
    "tolerance": _tolerance,
    "trials": _at_least("trials"),
    "robustness_trials": _at_least("robustness_trials"),
    "derive_alt": _on("derive_alt"),
    "race_check": _on("race_check"),
    "sanitize": _on("sanitize"),
    "timed_checks": _at_least("timed_checks"),
    "input_sets": _at_least("input_sets"),
    "wall_check_ms": _at_least("wall_check_ms"),
    "dataflow_functions": _at_least("dataflow_functions"),
}
"""Each check setting and how a config is found weaker than a floor (a phrase naming the value, else None)."""


def weaker(config: VerifyConfig, floor: VerifyConfig) -> dict[str, str]:
    """The check settings where `config` is weaker than `floor`: name -> what it asks and what the floor needs."""
    return {name: why for name, check in CHECKS.items() if (why := check(config, floor)) is not None}


def _verifiable_floor(config: VerifyConfig) -> VerifyConfig:
    return VerifyConfig(precision=config.precision, trials=VERIFIED_MIN_TRIALS, cache_dir=config.cache_dir)


def settings_used(config: VerifyConfig, timing: bool, sanitize: bool) -> SettingsUsed:
    """What a verdict records of the settings that judged it (`timing` and `sanitize`: this call's)."""
    judged = config.model_copy(update={"timing": timing, "sanitize": sanitize})
    defaults = VerifyConfig(cache_dir=config.cache_dir, device=config.device).model_dump(mode="json")
    changed = {}
    for name, value in judged.model_dump(mode="json").items():
        if name in _NOT_RECORDED or value == defaults[name]:
            continue
        if isinstance(value, dict):
            changed.update({f"{name}.{k}": json.dumps(v) for k, v in value.items() if v != defaults[name].get(k)})
        else:
            changed[name] = json.dumps(value)
    return SettingsUsed(changed=changed, weakened=sorted(weaker(judged, _verifiable_floor(judged))))


def service_view(config: VerifyConfig, own: VerifyConfig) -> tuple[VerifyConfig, list[str]]:
    """`config` with the service's own values for `SERVICE_OWNED` settings (the build cache excepted: a request for
    another is refused by the caller), and the names whose requested value was replaced."""
    kept = [n for n in SERVICE_OWNED if n != "cache_dir" and getattr(config, n) != getattr(own, n)]
    return config.model_copy(update={n: getattr(own, n) for n in kept}), kept


"""The verifier: compile, check and time one candidate against one problem, in isolated workers.

Public API: `Verifier(config).verify(problem, candidate) -> Verdict`, `Verifier.compile`, `Verifier.profile`,
`Verifier.device_peaks`. It never imports the agent and never calls a model. Names are imported lazily, so
`kernelmosaic.verify.static` and the verdict types load without torch.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

__all__ = ["Verifier", "VerifyConfig", "Verdict", "Status", "Finding", "CompileResult", "ProfileReport", "KernelStat",
           "DevicePeaks", "InputError", "Alternative"]

_WHERE = {
    "Verifier": "verifier", "InputError": "requests", "VerifyConfig": "config", "Verdict": "verdict",
    "Status": "verdict", "Finding": "verdict", "CompileResult": "results", "ProfileReport": "results",
    "KernelStat": "results", "DevicePeaks": "results", "Alternative": "requests",
}

if TYPE_CHECKING:
    from kernelmosaic.contracts.results import CompileResult, DevicePeaks, KernelStat, ProfileReport
    from kernelmosaic.contracts.verdict import Finding, Status, Verdict
    from kernelmosaic.verify.config import VerifyConfig
    from kernelmosaic.verify.requests import Alternative, InputError
    from kernelmosaic.verify.verifier import Verifier


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module 'kernelmosaic.verify' has no attribute {name!r}")
    return getattr(importlib.import_module(f"kernelmosaic.verify.{_WHERE[name]}"), name)

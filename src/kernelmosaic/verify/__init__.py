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
    "Verifier": "kernelmosaic.verify.verifier", "InputError": "kernelmosaic.verify.requests",
    "VerifyConfig": "kernelmosaic.verify.config", "Alternative": "kernelmosaic.verify.requests",
    "Verdict": "kernelmosaic.contracts.verdict", "Status": "kernelmosaic.contracts.verdict",
    "Finding": "kernelmosaic.contracts.verdict", "CompileResult": "kernelmosaic.contracts.results",
    "ProfileReport": "kernelmosaic.contracts.results", "KernelStat": "kernelmosaic.contracts.results",
    "DevicePeaks": "kernelmosaic.contracts.results",
}
"""Where each public name is defined: the verdict's types are the ground floor's (`contracts/`), re-exported here
as the verifier's return types."""

if TYPE_CHECKING:
    from kernelmosaic.contracts.results import CompileResult, DevicePeaks, KernelStat, ProfileReport
    from kernelmosaic.contracts.verdict import Finding, Status, Verdict
    from kernelmosaic.verify.config import VerifyConfig
    from kernelmosaic.verify.requests import Alternative, InputError
    from kernelmosaic.verify.verifier import Verifier


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module 'kernelmosaic.verify' has no attribute {name!r}")
    return getattr(importlib.import_module(_WHERE[name]), name)

"""The verifier: compile, check and time one candidate against one problem, in isolated workers.

Public API: `Verifier(config).verify(problem, candidate) -> Verdict`, `Verifier.compile`, `Verifier.profile`,
`Verifier.device_peaks`. It never imports the agent and never calls a model.
"""

from kernelmosaic.verify.config import VerifyConfig
from kernelmosaic.verify.results import CompileResult, DevicePeaks, KernelStat, ProfileReport
from kernelmosaic.verify.verdict import Finding, Status, Verdict
from kernelmosaic.verify.verifier import InputError, Verifier

__all__ = ["Verifier", "VerifyConfig", "Verdict", "Status", "Finding", "CompileResult", "ProfileReport", "KernelStat",
           "DevicePeaks", "InputError"]

"""Scale-out: where verification jobs and episodes run — this machine (`local`) or a Ray cluster (`ray`).

Ray is imported only when the `ray` executor is used (the `[ray]` extra); the verifier's worker side never imports
it. See docs/scale.md.
"""

from kernelmosaic.scale.config import ScaleConfig, scale_settings
from kernelmosaic.scale.executor import EXECUTORS, Executor, LocalExecutor, open_executor

__all__ = ["ScaleConfig", "scale_settings", "Executor", "LocalExecutor", "EXECUTORS", "open_executor"]

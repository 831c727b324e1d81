"""The evaluate stage: a model (one-shot or agent) or existing generations over a task set, three gates of metrics
from stored verdicts only, and reports with plots (docs/metrics.md defines every number)."""

from kernelmosaic.evaluate.config import EvalConfig
from kernelmosaic.evaluate.metrics import EvalSummary, GateMetrics, Rate
from kernelmosaic.evaluate.summary import summarize_run

__all__ = ["EvalConfig", "EvalSummary", "GateMetrics", "Rate", "summarize_run"]

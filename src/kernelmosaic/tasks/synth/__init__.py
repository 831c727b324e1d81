"""The task synthesizer: operator chains (GEMM or conv -> bias -> activation -> normalization -> reduction)
composed into fused tasks with consistent nl, reference and spec forms."""

from kernelmosaic.tasks.synth.composer import compose, synthesize
from kernelmosaic.tasks.synth.filtered import synthesize_audited

__all__ = ["synthesize", "synthesize_audited", "compose"]

"""Human review of tasks: the web page, the append-only decision log (in the store), the gate that lets
only accepted tasks into `generate` once a review exists, and the exclusions `sft export` and `evaluate` honour."""

from kernelmosaic.curate.review.gate import (
    ReviewExclusion,
    ReviewGate,
    accepted_task_ids,
    apply_review,
    review_exclusions,
)

__all__ = ["ReviewExclusion", "ReviewGate", "accepted_task_ids", "apply_review", "review_exclusions"]

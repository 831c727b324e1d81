"""Human review of tasks: the web page, the append-only decision log (in the store) and the gate that lets
only accepted tasks into `generate` once a review exists."""

from kernelmosaic.curate.review.gate import ReviewGate, accepted_task_ids, apply_review

__all__ = ["ReviewGate", "accepted_task_ids", "apply_review"]

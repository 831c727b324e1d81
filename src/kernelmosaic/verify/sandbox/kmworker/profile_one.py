"""Run one forward of a candidate on a problem's inputs, for `ncu` to profile (never used for judging).

`python -m kmworker.profile_one PROBLEM CANDIDATE DEVICE [CACHE_DIR]`: with CACHE_DIR, the candidate's extensions
load from the verifier's content-hashed build cache (a hit after judging) instead of being rebuilt.
"""

from __future__ import annotations

import contextlib
import sys

import torch

from .common import seed_all
from .loader import BuildRecorder, load_module


def main() -> None:
    problem, candidate, device = sys.argv[1:4]
    prob = load_module(problem, "km_problem")
    with BuildRecorder(sys.argv[4]) if len(sys.argv) > 4 else contextlib.nullcontext():
        cand = load_module(candidate, "km_candidate")
    seed_all(0)
    model = cand.ModelNew(*prob.get_init_inputs()).eval().to(device)
    with torch.device(device):
        inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in prob.get_inputs()]
    with torch.no_grad():
        model(*inputs)
        torch.cuda.synchronize()


if __name__ == "__main__":
    main()

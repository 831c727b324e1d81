"""Run one forward of a candidate on a problem's inputs under an outside tool (ncu, compute-sanitizer); never judges.

`python -m kmworker.profile_one [confinement flags] PROBLEM CANDIDATE DEVICE [CACHE_DIR]`: the flags are a candidate
worker's (`--landlock`, `--writable`, `--no-tcp`, `--scope`, `--subreaper`, `--drop-caps`; `verify/pool.py`
`tool_command` passes the host's plan), applied before torch is imported and before any candidate code runs, so the
candidate's code under a tool is as confined as in its worker. With CACHE_DIR the candidate's extensions load from
the verifier's content-hashed build cache (a hit after judging) instead of being rebuilt.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys


def main() -> None:
    parser = argparse.ArgumentParser(prog="kmworker.profile_one")
    parser.add_argument("--landlock", action="store_true")
    parser.add_argument("--writable", action="append", default=[])
    parser.add_argument("--no-tcp", action="store_true")
    parser.add_argument("--scope", action="store_true")
    parser.add_argument("--subreaper", action="store_true")
    parser.add_argument("--drop-caps", action="store_true")
    parser.add_argument("problem")
    parser.add_argument("candidate")
    parser.add_argument("device")
    parser.add_argument("cache_dir", nargs="?")
    args = parser.parse_args()
    from .confine import confine

    layers = confine("worker", [os.getcwd(), *args.writable], args.landlock, args.no_tcp, args.scope, args.subreaper,
                     args.drop_caps)
    print(f"km-profile-one isolation: {','.join(layers) or 'none'}", file=sys.stderr, flush=True)
    import torch

    from .common import seed_all
    from .loader import BuildRecorder, load_module

    prob = load_module(args.problem, "km_problem")
    with BuildRecorder(args.cache_dir) if args.cache_dir else contextlib.nullcontext():
        cand = load_module(args.candidate, "km_candidate")
    seed_all(0)
    model = cand.ModelNew(*prob.get_init_inputs()).eval().to(args.device)
    with torch.device(args.device):
        inputs = [x.to(args.device) if isinstance(x, torch.Tensor) else x for x in prob.get_inputs()]
    with torch.no_grad():
        model(*inputs)
        if args.device.startswith("cuda"):
            torch.cuda.synchronize()


if __name__ == "__main__":
    main()

"""Run one forward of a candidate on a problem's inputs under an outside tool (ncu, compute-sanitizer); never judges.

`python -m kmworker.profile_one [confinement flags] PROBLEM CANDIDATE DEVICE [CACHE_DIR]`: the flags are a candidate
worker's (`--landlock`, `--writable`, `--no-tcp`, `--scope`, `--subreaper`, `--drop-caps`; `verify/pool.py`
`tool_command` passes the host's plan), applied before torch is imported and before any candidate code runs, so the
candidate's code under a tool is as confined as in its worker. With CACHE_DIR the candidate's extensions load from
the verifier's content-hashed build cache (a hit after judging) instead of being rebuilt.

`--gate GO`: set up first (Python, torch, the problem and the candidate loaded, the CUDA context made: no kernel has
run), then say so (`km-ready` in the working directory) and wait for the file GO before the forward. The caller holds
the device only from then on (`verify/sanitize.py`): under compute-sanitizer the start takes most of a run's time and
runs no kernel, so it need not keep another candidate's timing waiting. Each step's wall-clock time goes to stderr
(`km-profile-one stage NAME EPOCH_SECONDS`), so a report says where a run's time went.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from pathlib import Path

READY = "km-ready"
"""The file a gated run writes in its working directory when it is set up and waits for the go file."""


def _stage(name: str) -> None:
    print(f"km-profile-one stage {name} {time.time():.3f}", file=sys.stderr, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(prog="kmworker.profile_one")
    parser.add_argument("--landlock", action="store_true")
    parser.add_argument("--writable", action="append", default=[])
    parser.add_argument("--no-tcp", action="store_true")
    parser.add_argument("--scope", action="store_true")
    parser.add_argument("--subreaper", action="store_true")
    parser.add_argument("--drop-caps", action="store_true")
    parser.add_argument("--tasks-writable", action="store_true")
    parser.add_argument("--gate")
    parser.add_argument("problem")
    parser.add_argument("candidate")
    parser.add_argument("device")
    parser.add_argument("cache_dir", nargs="?")
    args = parser.parse_args()
    from .confine import confine

    layers = confine("worker", [os.getcwd(), *args.writable], args.landlock, args.no_tcp, args.scope, args.subreaper,
                     args.drop_caps, tasks_writable=args.tasks_writable)
    print(f"km-profile-one isolation: {','.join(layers) or 'none'}", file=sys.stderr, flush=True)
    _stage("start")
    import torch

    from .common import seed_all
    from .loader import BuildRecorder, load_module

    _stage("torch")
    prob = load_module(args.problem, "km_problem")
    with BuildRecorder(args.cache_dir) if args.cache_dir else contextlib.nullcontext():
        cand = load_module(args.candidate, "km_candidate")
    _stage("loaded")
    if args.gate:
        if args.device.startswith("cuda"):
            torch.cuda.mem_get_info()  # the context, made here: it runs no kernel
        Path(READY).touch()
        _stage("ready")
        while not os.path.exists(args.gate):
            time.sleep(0.01)
        _stage("go")
    seed_all(0)
    model = cand.ModelNew(*prob.get_init_inputs()).eval().to(args.device)
    with torch.device(args.device):
        inputs = [x.to(args.device) if isinstance(x, torch.Tensor) else x for x in prob.get_inputs()]
    with torch.no_grad():
        model(*inputs)
        if args.device.startswith("cuda"):
            torch.cuda.synchronize()
    _stage("done")


if __name__ == "__main__":
    main()

"""Peak device memory of one forward, beyond what was allocated before it (inputs, weights, the worker's own buffers).

CUDA only: the caching allocator's peak counter, reset just before the call. A figure from the worker's process, so a
candidate's native code could lower it; it is reported as a metric, never used to accept or reject.
"""

from __future__ import annotations

import torch

__all__ = ["forward_peak_bytes"]


@torch.no_grad()
def forward_peak_bytes(model, inputs: list, device: str) -> int | None:
    if not device.startswith("cuda"):
        return None
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    out = model(*inputs)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - base
    del out
    return max(int(peak), 0)

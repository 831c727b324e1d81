"""The worker's door for fast-form launches, on the CPU: pointer arguments map back to the probe's tensors, and a
watched launch's written buffer is replaced by noise when its entry point is perturbed (the GPU tests run CuPy)."""

from __future__ import annotations

import numpy as np
import torch

from kernelmosaic.verify.sandbox.kmworker.fastform import recording, tensors_from_pointers
from kernelmosaic.verify.sandbox.kmworker.intercept import Interceptor


class _Array:
    """Stands for a CuPy array: what the door reads of one is `.data.ptr`."""

    def __init__(self, t: torch.Tensor) -> None:
        self.data = type("Ptr", (), {"ptr": t.data_ptr()})()


def test_pointer_arguments_map_to_the_tensors_that_start_there():
    x, y, w = torch.randn(64), torch.empty(64), torch.randn(8)
    view = x[16:]  # starts inside x: only a tensor starting at the address counts
    args = (x.data_ptr(), np.uint64(y.data_ptr()), _Array(w), np.int64(64), 64, view.data_ptr(), True)
    found = tensors_from_pointers(args, [x, y, w])
    assert [id(t) for t in found] == [id(x), id(y), id(w)]


def test_recording_keeps_every_tensor_an_operator_returns():
    known: list[torch.Tensor] = []
    a = torch.randn(5)
    with recording(known):
        b = torch.empty_like(a)
        c = (a * 2).view(5, 1)
    assert any(t is b for t in known) and any(t is c for t in known)


def test_a_perturbed_launch_has_its_written_buffer_replaced_and_untouched_inputs_kept():
    icpt = Interceptor()
    x = torch.arange(32, dtype=torch.float32)
    y = torch.zeros(32)

    def launch(grid, block, args, **kwargs):  # writes y = 2x, as the kernel at these pointers would
        assert args[0] == x.data_ptr() and args[1] == y.data_ptr() and kwargs == {"shared_mem": 0}
        y.copy_(2 * x)

    args = (x.data_ptr(), y.data_ptr(), 32)
    icpt.known = [x, y]
    icpt.reset(set(), 0, lambda: None)
    icpt.active = True
    icpt.call_raw("cupy.double", launch, (1,), (32,), args, {"shared_mem": 0})
    assert icpt.calls == {"cupy.double": 1} and torch.equal(y, 2 * x)
    icpt.reset({"cupy.double"}, 1, lambda: None)
    y.zero_()  # each probe's forward writes a fresh buffer (NaN-filled there): a write is seen as a change
    icpt.call_raw("cupy.double", launch, (1,), (32,), args, {"shared_mem": 0})
    assert not torch.allclose(y, 2 * x) and torch.equal(x, torch.arange(32, dtype=torch.float32))
    icpt.active = False
    icpt.call_raw("cupy.double", launch, (1,), (32,), args, {"shared_mem": 0})  # outside a probe: straight through
    assert torch.equal(y, 2 * x) and icpt.calls == {"cupy.double": 1}

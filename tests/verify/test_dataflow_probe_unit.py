"""The probe's interceptor on its own (no build): which buffers of a perturbed call it treats as the kernel's output.

A "kernel" here is a Python function called through `Interceptor.call`, as the wrapped extension functions are.
"""

from __future__ import annotations

import torch

from kernelmosaic.verify.sandbox.kmworker.intercept import Interceptor


def _probe(kernel, *args, perturb: bool = True):
    icpt = Interceptor()
    icpt.reset({"k"} if perturb else set(), seed=3, sync=lambda: None)
    icpt.active = True
    try:
        return icpt.call("k", kernel, args, {}), icpt
    finally:
        icpt.active = False


def _add_relu_out(a, b, out):
    torch.add(a, b, out=out)
    out.clamp_(min=0.0)


def test_a_reused_buffer_holding_identical_values_is_still_seen_as_written():
    a, b = torch.randn(256), torch.randn(256)
    buf = torch.empty(256)
    _add_relu_out(a, b, buf)  # the previous forward's result: what the probed call writes again
    expected = buf.clone()
    a0, b0 = a.clone(), b.clone()
    _probe(_add_relu_out, a, b, buf)
    assert not torch.equal(buf, expected)  # noised: the kernel's output, though rewritten with the same values
    assert torch.equal(a, a0) and torch.equal(b, b0)  # its read-only inputs are put back as they were
    assert icpt_noised(_add_relu_out, torch.randn(8), torch.randn(8), torch.empty(8)) == 1


def icpt_noised(kernel, *args) -> int:
    """How many tensors one perturbed call of `kernel` had replaced by noise."""
    return _probe(kernel, *args)[1].noised.get("k", 0)


def test_a_host_value_is_not_a_tensor_output():
    assert icpt_noised(lambda n: (n + 15) // 16 * 16, 100) == 0
    assert icpt_noised(lambda x: x.numel(), torch.randn(4)) == 0
    assert icpt_noised(lambda x: (x * 2, x + 1), torch.randn(4)) == 2


def test_a_buffer_the_kernel_only_reads_is_left_alone():
    weight, x = torch.randn(64), torch.randn(64)
    w0 = weight.clone()
    out, _ = _probe(lambda w, v: w * v, weight, x)
    assert torch.equal(weight, w0)
    assert not torch.allclose(out, w0 * x)  # the returned tensor is the output, and it is noised


def test_an_identity_rewrite_of_an_input_is_not_output():
    x = torch.randn(64)
    x0 = x.clone()

    def touch(t):
        t.copy_(t.clone())  # writes every element, each with the value it already held

    _probe(touch, x)
    assert torch.equal(x, x0)


def test_a_kernel_that_raises_on_noise_keeps_its_first_result():
    a = torch.randn(32).abs() + 1.0
    buf = torch.sqrt(a)
    a0, buf0 = a.clone(), buf.clone()

    def checked_sqrt(x, out):
        if bool((x < 0).any()):
            raise ValueError("negative input")
        torch.sqrt(x, out=out)

    calls = []
    _, icpt = _probe(lambda x, out: calls.append(1) or checked_sqrt(x, out), a, buf)
    assert len(calls) == 2 and icpt.calls == {"k": 1}  # one counted call, one repeat to find the written buffers
    assert torch.equal(a, a0) and torch.equal(buf, buf0)  # the repeat proved nothing, and left nothing behind


def test_an_expanded_input_is_not_noised():
    row = torch.randn(1, 16)
    wide = row.expand(8, 16)
    out = torch.empty(8, 16)
    _probe(lambda x, o: o.copy_(x * 2.0), wide, out)
    assert torch.equal(wide, row.expand(8, 16))


def test_without_perturbation_the_kernel_runs_once_and_nothing_changes():
    a, b, buf = torch.randn(16), torch.randn(16), torch.empty(16)
    calls = []
    _probe(lambda *t: calls.append(1) or _add_relu_out(*t), a, b, buf, perturb=False)
    assert len(calls) == 1 and torch.equal(buf, torch.relu(a + b))

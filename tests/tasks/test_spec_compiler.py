"""Spec compiler: generated modules compute what hand-written PyTorch computes."""

from __future__ import annotations

import types

import pytest
import torch

from kernelmosaic.tasks.spec import SpecError, compile_spec, load_spec_module


def _module(spec: str, sizes: dict | None = None) -> types.ModuleType:
    return load_spec_module(spec, sizes)


def _run(spec: str, *inputs: torch.Tensor, init: tuple = ()) -> torch.Tensor:
    return _module(spec).Model(*init)(*inputs)


def test_matmul_with_bias_uses_einsum_and_matches() -> None:
    spec = "dim M=5, N=3, K=7\ninput A: f32[M, K]\ninput B: f32[K, N]\ninput bias: f32[N]\n" \
           "output C[i, j] = sum(k, A[i, k] * B[k, j]) + bias[j]\n"
    assert "torch.einsum('ab,bc->ac', A, B)" in compile_spec(spec)
    a, b, bias = torch.randn(5, 7), torch.randn(7, 3), torch.randn(3)
    torch.testing.assert_close(_run(spec, a, b, bias), a @ b + bias)


def test_stable_softmax_over_rows() -> None:
    spec = "dim B=4, D=9\ninput x: f32[B, D]\nlet m[b] = max(d, x[b, d])\nlet e[b, d] = exp(x[b, d] - m[b])\n" \
           "output y[b, d] = e[b, d] / sum(k, e[b, k])\n"
    x = torch.randn(4, 9) * 5
    torch.testing.assert_close(_run(spec, x), torch.softmax(x, dim=1))


def test_layer_norm_without_affine() -> None:
    spec = "dim B=3, D=16\ninput x: f32[B, D]\nlet mu[b] = mean(d, x[b, d])\n" \
           "let var[b] = mean(d, (x[b, d] - mu[b]) ** 2)\noutput y[b, d] = (x[b, d] - mu[b]) * rsqrt(var[b] + 1e-5)\n"
    x = torch.randn(3, 16)
    torch.testing.assert_close(_run(spec, x), torch.nn.functional.layer_norm(x, (16,), eps=1e-5))


def test_transposed_output_and_broadcast_over_leading_dims() -> None:
    spec = "dim B=2, C=3, H=4\ninput x: f32[B, C, H]\ninput s: f32[C]\noutput y[h, c, b] = x[b, c, h] * s[c]\n"
    x, s = torch.randn(2, 3, 4), torch.randn(3)
    torch.testing.assert_close(_run(spec, x, s), (x * s[None, :, None]).permute(2, 1, 0))


def test_params_map_to_init_inputs_and_elementwise_functions() -> None:
    spec = "dim N=32\ninput x: f32[N]\nparam lo: f32 = -0.5\nparam slope: f32 = 0.1\n" \
           "output y[i] = clamp(where(x[i] > 0.0, x[i], slope * x[i]), lo, 2.0) + min(gelu(x[i]), 1.0) " \
           "+ pow(abs(x[i]), 2.0) - softplus(x[i]) / 2\n"
    module = _module(spec)
    assert module.get_init_inputs() == [-0.5, 0.1]
    x = torch.randn(32)
    want = torch.clamp(torch.nn.functional.leaky_relu(x, 0.3), -0.25, 2.0) \
        + torch.clamp(torch.nn.functional.gelu(x), max=1.0) + x.abs() ** 2 - torch.nn.functional.softplus(x) / 2
    torch.testing.assert_close(module.Model(-0.25, 0.3)(x), want)


def test_multi_index_reductions_scalar_output_and_several_outputs() -> None:
    spec = "dim B=3, H=5, W=6\ninput x: f32[B, H, W]\noutput total = sum(b, h, w, x[b, h, w])\n" \
           "output peak[b] = max(h, w, x[b, h, w])\noutput low[h] = min(b, w, x[b, h, w])\n" \
           "output first[b, w] = x[b, 0, w]\n"
    x = torch.randn(3, 5, 6)
    total, peak, low, first = _run(spec, x)
    torch.testing.assert_close(total, x.sum())
    torch.testing.assert_close(peak, x.amax(dim=(1, 2)))
    torch.testing.assert_close(low, x.amin(dim=(0, 2)))
    torch.testing.assert_close(first, x[:, 0, :])


def test_mse_loss_and_nested_reduction() -> None:
    spec = "dim B=8, D=10\ninput p: f32[B, D]\ninput t: f32[B, D]\n" \
           "output loss = mean(b, d, (p[b, d] - t[b, d]) ** 2)\n" \
           "output rowmax_of_sums = max(b, sum(d, p[b, d]))\n"
    p, t = torch.randn(8, 10), torch.randn(8, 10)
    loss, m = _run(spec, p, t)
    torch.testing.assert_close(loss, torch.nn.functional.mse_loss(p, t))
    torch.testing.assert_close(m, p.sum(dim=1).max())


def test_generated_module_is_kernelbench_format_with_reference_sizes() -> None:
    spec = "dim batch_size, dim\ninput x: f32[batch_size, dim]\noutput y[b, d] = tanh(x[b, d])\n"
    module = _module(spec, {"batch_size": 2, "dim": 5})
    (x,) = module.get_inputs()
    assert x.shape == (2, 5) and x.dtype == torch.float32
    torch.testing.assert_close(module.Model(*module.get_init_inputs())(x), torch.tanh(x))


def test_size_without_value_is_reported() -> None:
    with pytest.raises(SpecError, match="size 'dim' has no value"):
        compile_spec("dim dim\ninput x: f32[dim]\noutput y[i] = x[i]\n")


def test_sum_over_product_with_a_bool_mask_falls_back_to_broadcasting() -> None:
    spec = "dim B=3, D=8\ninput x: f32[B, D]\ninput mask: bool[B, D]\n" \
           "output y[b] = sum(d, x[b, d] * mask[b, d])\noutput z[b] = sum(d, x[b, d] * (x[b, d] > 0.0))\n"
    assert "einsum" not in compile_spec(spec)
    x, mask = torch.randn(3, 8), torch.rand(3, 8) > 0.5
    y, z = _run(spec, x, mask)
    torch.testing.assert_close(y, (x * mask).sum(dim=1))
    torch.testing.assert_close(z, torch.relu(x).sum(dim=1))


def test_index_spanning_two_different_sizes_is_an_error_at_the_access() -> None:
    spec = "dim M=4, K=5, J=6\ninput A: f32[M, K]\ninput B: f32[J, J]\noutput C[i, n] = sum(k, A[i, k] * B[n, k])\n"
    with pytest.raises(SpecError) as info:
        compile_spec(spec)
    assert (info.value.line, info.value.col) == (4, 35)
    assert "index 'k' spans 6 in B (dimension 1) but 5 in A (dimension 1)" in info.value.message

"""Reference modules and candidate implementations for the error-budget property test: honest ones that sum in
another order (sequential, several accumulators, reversed, split-K) and broken ones (a skipped term, TF32-like
mantissa truncation, half-precision accumulation, an off-by-one index)."""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["CASES", "Case"]


def seq_sum(x: torch.Tensor, dim: int = -1, dtype=np.float32, lanes: int = 1, reverse: bool = False) -> torch.Tensor:
    """Sum along `dim` one term at a time into `lanes` accumulators of `dtype` (lanes combined in order)."""
    a = x.movedim(dim, -1).numpy()
    if reverse:
        a = a[..., ::-1]
    n = a.shape[-1]
    a = a.reshape(*a.shape[:-1], n // lanes, lanes).astype(dtype)
    parts = np.cumsum(a, axis=-2, dtype=dtype)[..., -1, :]
    total = np.cumsum(parts, axis=-1, dtype=dtype)[..., -1]
    return torch.from_numpy(np.ascontiguousarray(total).astype(np.float32))


def tf32(x: torch.Tensor) -> torch.Tensor:
    """Round to TF32's 10 mantissa bits, as a tensor core would before multiplying."""
    bits = x.contiguous().view(torch.int32)
    return ((bits + (1 << 12)) & ~((1 << 13) - 1)).view(torch.float32)


def seq_matmul(a: torch.Tensor, b: torch.Tensor, dtype=np.float32, lanes: int = 1) -> torch.Tensor:
    prod = (a.unsqueeze(-1) * b.unsqueeze(0))  # (M, K, N): every product rounded to fp32 once, as an FMA-free loop does
    return seq_sum(prod, dim=1, dtype=dtype, lanes=lanes)


class RowSum(torch.nn.Module):
    def forward(self, x):
        return x.sum(dim=1)


class Softmax(torch.nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=1)


class LayerNorm(torch.nn.Module):
    def __init__(self, n: int) -> None:
        super().__init__()
        self.ln = torch.nn.LayerNorm(n)
        with torch.no_grad():
            self.ln.weight.uniform_(0.5, 1.5)
            self.ln.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        return self.ln(x)


class MatMul(torch.nn.Module):
    def forward(self, a, b):
        return a @ b


def _softmax(x, lanes=1, dtype=np.float32):
    m = x.max(dim=1, keepdim=True).values
    e = torch.exp(x - m)
    return e / seq_sum(e, dtype=dtype, lanes=lanes).unsqueeze(1)


def _layernorm(model, x, lanes=1, skip_last=False, dtype=np.float32):
    n = x.shape[1] - (1 if skip_last else 0)
    xs = x[:, :n] if skip_last else x
    mean = (seq_sum(xs, dtype=dtype, lanes=lanes) / n).unsqueeze(1)
    d = x - mean
    var = (seq_sum((d * d)[:, :n] if skip_last else d * d, dtype=dtype, lanes=lanes) / n).unsqueeze(1)
    return d / torch.sqrt(var + model.ln.eps) * model.ln.weight + model.ln.bias


def _shift(y: torch.Tensor) -> torch.Tensor:
    """An off-by-one index along the last dimension: element i reads i+1 (the last one is repeated)."""
    return torch.cat([y[..., 1:], y[..., -1:]], dim=-1)


CANCELLING = ("given", "scaled")
"""Where a rounding-level error shows: with all-positive inputs, TF32's 2^-11 is within fp32's rtol (1e-4)."""


class Case:
    def __init__(self, name, model, inputs, legit: dict, broken: dict, only: dict | None = None) -> None:
        self.name, self.model, self.inputs, self.legit, self.broken = name, model, inputs, legit, broken
        self.only = only or {}
        """broken variant -> the input distributions on which it must fail (default: all)."""


def _rows(n):
    def draw(gen, dist):
        x = torch.randn(16, n, generator=gen)
        if dist == "scaled":
            x = x * 4 + torch.randn(16, n, generator=gen)
        elif dist == "positive":
            x = torch.rand(16, n, generator=gen)
        return [x]
    return draw


def _mats(gen, dist):
    a, b = torch.randn(12, 1024, generator=gen), torch.randn(1024, 12, generator=gen)
    if dist == "scaled":
        a = a * 4 + torch.randn(12, 1024, generator=gen)
    elif dist == "positive":
        a, b = torch.rand(12, 1024, generator=gen), torch.rand(1024, 12, generator=gen)
    return [a, b]


def _cases() -> list[Case]:
    ln = LayerNorm(1024).eval()
    return [
        Case("rowsum", RowSum(), _rows(4096), legit={
            "sequential": lambda x: seq_sum(x),
            "four_accumulators": lambda x: seq_sum(x, lanes=4),
            "reversed": lambda x: seq_sum(x, reverse=True),
            "32_lanes": lambda x: seq_sum(x, lanes=32),
        }, broken={
            "skipped_term": lambda x: seq_sum(x[:, :-1]),
            "tf32_inputs": lambda x: seq_sum(tf32(x), lanes=4),
            "fp16_accumulator": lambda x: seq_sum(x, dtype=np.float16, lanes=4),
            "off_by_one": lambda x: seq_sum(torch.cat([x[:, 1:], x[:, -1:]], dim=1), lanes=4),
        }, only={"tf32_inputs": CANCELLING}),
        Case("softmax", Softmax(), _rows(1024), legit={
            "sequential": lambda x: _softmax(x),
            "four_accumulators": lambda x: _softmax(x, lanes=4),
        }, broken={
            "off_by_one": lambda x: _shift(_softmax(x, lanes=4)),
            "fp16_values": lambda x: torch.softmax(x.half().float(), 1).half().float(),
        }, only={"fp16_values": ("scaled",)}),
        Case("layernorm", ln, _rows(1024), legit={
            "sequential": lambda x: _layernorm(ln, x),
            "four_accumulators": lambda x: _layernorm(ln, x, lanes=4),
        }, broken={
            "skipped_term": lambda x: _layernorm(ln, x, skip_last=True),
            "off_by_one": lambda x: _shift(_layernorm(ln, x, lanes=4)),
            "fp16_accumulator": lambda x: _layernorm(ln, x, lanes=4, dtype=np.float16),
        }),
        Case("matmul", MatMul(), _mats, legit={
            "sequential_k": lambda a, b: seq_matmul(a, b),
            "four_accumulators": lambda a, b: seq_matmul(a, b, lanes=4),
            "split_k": lambda a, b: (a[:, :512] @ b[:512]) + (a[:, 512:] @ b[512:]),
        }, broken={
            "skipped_term": lambda a, b: a[:, 1:] @ b[1:],
            "tf32_inputs": lambda a, b: seq_matmul(tf32(a), tf32(b), lanes=4),
            "fp16_accumulator": lambda a, b: seq_matmul(a, b, dtype=np.float16, lanes=4),
            "bf16_inputs": lambda a, b: a.bfloat16().float() @ b.bfloat16().float(),
            "off_by_one": lambda a, b: _shift(a @ b),
        }, only={"tf32_inputs": CANCELLING, "bf16_inputs": CANCELLING}),
    ]


CASES = _cases()

"""Rotary position embedding (RoPE) applied to queries."""

import torch
import torch.nn as nn

batch_size = 16
num_heads = 32
seq_len = 2048
head_dim = 128


class Model(nn.Module):
    def __init__(self, base: float):
        super().__init__()
        self.base = base

    def forward(self, x):
        half = x.shape[-1] // 2
        inv_freq = 1.0 / (self.base ** (torch.arange(half, device=x.device, dtype=torch.float32) / half))
        angles = torch.arange(x.shape[2], device=x.device, dtype=torch.float32)[:, None] * inv_freq[None, :]
        cos, sin = torch.cos(angles), torch.sin(angles)
        x1, x2 = x[..., :half], x[..., half:]
        return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)


def get_inputs():
    return [torch.randn(batch_size, num_heads, seq_len, head_dim)]


def get_init_inputs():
    return [10000.0]

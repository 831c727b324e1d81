"""RMSNorm with a learned per-feature weight."""

import torch
import torch.nn as nn

batch_size = 16
seq_len = 2048
hidden = 2048


class Model(nn.Module):
    def __init__(self, hidden_size: int):
        super().__init__()
        self.eps = 1e-6
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(hidden_size))

    def forward(self, x):
        inv_rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return x * inv_rms * self.weight


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden)]


def get_init_inputs():
    return [hidden]

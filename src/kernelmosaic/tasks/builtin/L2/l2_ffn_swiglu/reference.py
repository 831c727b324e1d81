"""SwiGLU feed-forward block."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
hidden = 2048
ffn_dim = 5632


class Model(nn.Module):
    def __init__(self, hidden: int, ffn_dim: int):
        super().__init__()
        self.gate = nn.Linear(hidden, ffn_dim, bias=False)
        self.up = nn.Linear(hidden, ffn_dim, bias=False)
        self.down = nn.Linear(ffn_dim, hidden, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


def get_inputs():
    return [torch.randn(batch_size, hidden)]


def get_init_inputs():
    return [hidden, ffn_dim]

"""LayerNorm over the hidden dimension with random affine parameters."""

import torch
import torch.nn as nn

batch_size = 32
seq_len = 1024
hidden = 1024


class Model(nn.Module):
    def __init__(self, hidden_size: int):
        super().__init__()
        self.norm = nn.LayerNorm(hidden_size, eps=1e-5)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.1 * torch.randn(hidden_size))
            self.norm.bias.copy_(0.1 * torch.randn(hidden_size))

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden) * 2.0 + 0.5]


def get_init_inputs():
    return [hidden]

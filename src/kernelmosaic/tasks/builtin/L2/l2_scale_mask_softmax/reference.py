"""Scale -> additive mask -> softmax."""

import torch
import torch.nn as nn

batch_size = 8
num_heads = 16
seq_len = 1024


class Model(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, scores, mask):
        return torch.softmax(scores * self.scale + mask, dim=-1)


def get_inputs():
    return [torch.randn(batch_size, num_heads, seq_len, seq_len) * 4.0, (torch.rand(seq_len, seq_len) < 0.2).float() * -10000.0]


def get_init_inputs():
    return [0.125]

"""Clamp to an asymmetric range, applied elementwise to a 2D tensor."""

import torch
import torch.nn as nn

batch_size = 4096
dim = 8192


class Model(nn.Module):
    def __init__(self, lo: float, hi: float):
        super().__init__()
        self.lo = lo
        self.hi = hi

    def forward(self, x):
        return torch.clamp(x, min=self.lo, max=self.hi)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [-0.75, 1.25]

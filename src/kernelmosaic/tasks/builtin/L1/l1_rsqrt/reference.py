"""Reciprocal square root, applied elementwise to a 2D tensor."""

import torch
import torch.nn as nn

batch_size = 4096
dim = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.rsqrt(x)


def get_inputs():
    return [torch.rand(batch_size, dim) * 4.0 + 0.1]


def get_init_inputs():
    return []

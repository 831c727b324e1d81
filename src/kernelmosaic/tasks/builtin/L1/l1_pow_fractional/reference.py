"""Fractional power, applied elementwise to a 2D tensor."""

import torch
import torch.nn as nn

batch_size = 4096
dim = 8192


class Model(nn.Module):
    def __init__(self, exponent: float):
        super().__init__()
        self.exponent = exponent

    def forward(self, x):
        return torch.pow(x, self.exponent)


def get_inputs():
    return [torch.rand(batch_size, dim) * 5.0]


def get_init_inputs():
    return [1.5]

"""Bias add -> GELU -> residual add."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8192
dim = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, bias, residual):
        return residual + F.gelu(x + bias)


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randn(dim), torch.randn(batch_size, dim)]


def get_init_inputs():
    return []

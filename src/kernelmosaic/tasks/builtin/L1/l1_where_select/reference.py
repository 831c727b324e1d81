"""Elementwise select between two tensors."""

import torch
import torch.nn as nn

batch_size = 4096
dim = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, cond, x, y):
        return torch.where(cond, x, y)


def get_inputs():
    return [torch.rand(batch_size, dim) < 0.5, torch.randn(batch_size, dim), torch.randn(batch_size, dim)]


def get_init_inputs():
    return []

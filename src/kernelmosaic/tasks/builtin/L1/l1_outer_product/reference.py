"""Outer product of two vectors."""

import torch
import torch.nn as nn

size_m = 16384
size_n = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.outer(a, b)


def get_inputs():
    return [torch.randn(size_m), torch.randn(size_n)]


def get_init_inputs():
    return []

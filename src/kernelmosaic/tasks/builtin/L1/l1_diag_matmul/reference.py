"""Diagonal matrix times matrix."""

import torch
import torch.nn as nn

size_m = 8192
size_n = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, d, b):
        return torch.diag(d) @ b


def get_inputs():
    return [torch.randn(size_m), torch.randn(size_m, size_n)]


def get_init_inputs():
    return []

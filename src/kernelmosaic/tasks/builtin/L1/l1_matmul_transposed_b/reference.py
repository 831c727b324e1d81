"""Matmul with the second operand transposed."""

import torch
import torch.nn as nn

size_m = 4096
size_k = 2048
size_n = 3072


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b.T)


def get_inputs():
    return [torch.randn(size_m, size_k), torch.randn(size_n, size_k)]


def get_init_inputs():
    return []

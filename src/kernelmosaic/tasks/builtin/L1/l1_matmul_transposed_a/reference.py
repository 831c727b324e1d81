"""Matmul with the first operand transposed."""

import torch
import torch.nn as nn

size_m = 2048
size_k = 4096
size_n = 3072


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a.T, b)


def get_inputs():
    return [torch.randn(size_k, size_m), torch.randn(size_k, size_n)]


def get_init_inputs():
    return []

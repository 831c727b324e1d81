"""Matmul -> ReLU -> row sum."""

import torch
import torch.nn as nn

size_m = 4096
size_k = 2048
size_n = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.relu(a @ b).sum(dim=1)


def get_inputs():
    return [torch.randn(size_m, size_k), torch.randn(size_k, size_n)]


def get_init_inputs():
    return []

"""Matmul -> scale -> row softmax."""

import torch
import torch.nn as nn

size_m = 4096
size_k = 1024
size_n = 4096


class Model(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, a, b):
        return torch.softmax(torch.matmul(a, b) * self.scale, dim=-1)


def get_inputs():
    return [torch.randn(size_m, size_k), torch.randn(size_k, size_n)]


def get_init_inputs():
    return [0.05]

"""Batched matrix multiplication."""

import torch
import torch.nn as nn

batch_size = 128
size_m = 512
size_k = 1024
size_n = 768


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.bmm(a, b)


def get_inputs():
    return [torch.randn(batch_size, size_m, size_k), torch.randn(batch_size, size_k, size_n)]


def get_init_inputs():
    return []

"""Batched bfloat16 matmul."""

import torch
import torch.nn as nn

batch_size = 64
size_m = 1024
size_k = 512
size_n = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.bmm(a, b)


def get_inputs():
    return [torch.randn(batch_size, size_m, size_k, dtype=torch.bfloat16), torch.randn(batch_size, size_k, size_n, dtype=torch.bfloat16)]


def get_init_inputs():
    return []

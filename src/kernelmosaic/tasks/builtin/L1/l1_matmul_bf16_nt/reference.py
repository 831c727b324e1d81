"""bfloat16 matmul with transposed B."""

import torch
import torch.nn as nn

size_m = 8192
size_k = 4096
size_n = 6144


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return a @ b.T


def get_inputs():
    return [torch.randn(size_m, size_k, dtype=torch.bfloat16), torch.randn(size_n, size_k, dtype=torch.bfloat16)]


def get_init_inputs():
    return []

"""Half-precision matrix multiplication."""

import torch
import torch.nn as nn

size_m = 8192
size_k = 4096
size_n = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return a @ b


def get_inputs():
    return [torch.randn(size_m, size_k, dtype=torch.float16), torch.randn(size_k, size_n, dtype=torch.float16)]


def get_init_inputs():
    return []

"""Matrix-vector product."""

import torch
import torch.nn as nn

size_m = 16384
size_k = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, x):
        return torch.mv(a, x)


def get_inputs():
    return [torch.randn(size_m, size_k), torch.randn(size_k)]


def get_init_inputs():
    return []

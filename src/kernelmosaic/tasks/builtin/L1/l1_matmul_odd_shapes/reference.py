"""Matrix multiplication with odd sizes."""

import torch
import torch.nn as nn

size_m = 1023
size_k = 2049
size_n = 3071


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return a @ b


def get_inputs():
    return [torch.randn(size_m, size_k), torch.randn(size_k, size_n)]


def get_init_inputs():
    return []

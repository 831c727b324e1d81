"""3D tensor times matrix."""

import torch
import torch.nn as nn

batch_size = 32
size_m = 1024
size_k = 2048
size_n = 1536


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(batch_size, size_m, size_k), torch.randn(size_k, size_n)]


def get_init_inputs():
    return []

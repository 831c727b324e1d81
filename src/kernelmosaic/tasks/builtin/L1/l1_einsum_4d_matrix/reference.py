"""4D tensor contracted with a matrix on its last dim."""

import torch
import torch.nn as nn

batch_size = 8
dim_i = 64
dim_j = 256
dim_l = 512
dim_k = 768


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.einsum("bijl,lk->bijk", a, b)


def get_inputs():
    return [torch.randn(batch_size, dim_i, dim_j, dim_l), torch.randn(dim_l, dim_k)]


def get_init_inputs():
    return []

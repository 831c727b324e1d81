"""Index-add rows into a matrix."""

import torch
import torch.nn as nn

num_rows = 16384
dim = 1024
num_src = 65536


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, index, src):
        return x.index_add(0, index, src)


def get_inputs():
    return [torch.randn(num_rows, dim), torch.randint(0, num_rows, (num_src,)), torch.randn(num_src, dim)]


def get_init_inputs():
    return []

"""Select rows by index."""

import torch
import torch.nn as nn

num_rows = 65536
dim = 1024
num_idx = 32768


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, index):
        return torch.index_select(x, 0, index)


def get_inputs():
    return [torch.randn(num_rows, dim), torch.randint(0, num_rows, (num_idx,))]


def get_init_inputs():
    return []

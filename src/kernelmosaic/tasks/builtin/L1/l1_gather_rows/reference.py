"""Gather along dim 1."""

import torch
import torch.nn as nn

batch_size = 4096
dim = 8192
num_idx = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, index):
        return torch.gather(x, 1, index)


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randint(0, dim, (batch_size, num_idx))]


def get_init_inputs():
    return []

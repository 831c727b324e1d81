"""Scatter-add into bins along dim 1."""

import torch
import torch.nn as nn

batch_size = 4096
dim = 8192
num_bins = 1024


class Model(nn.Module):
    def __init__(self, num_bins: int):
        super().__init__()
        self.num_bins = num_bins

    def forward(self, src, index):
        out = torch.zeros(src.shape[0], self.num_bins, dtype=src.dtype, device=src.device)
        return out.scatter_add(1, index, src)


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randint(0, num_bins, (batch_size, dim))]


def get_init_inputs():
    return [num_bins]

"""Top-1 value and index of each row."""

import torch
import torch.nn as nn

batch_size = 16384
dim = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        values, indices = torch.max(x, dim=1)
        return values, indices


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []

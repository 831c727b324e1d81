"""Max over two trailing dims."""

import torch
import torch.nn as nn

batch_size = 64
dim1 = 1024
dim2 = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.amax(x, dim=(1, 2))


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2)]


def get_init_inputs():
    return []

"""Take along the last dim of a 3D tensor."""

import torch
import torch.nn as nn

batch_size = 64
rows = 512
cols = 1024
num_idx = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, index):
        return torch.take_along_dim(x, index, dim=2)


def get_inputs():
    return [torch.randn(batch_size, rows, cols), torch.randint(0, cols, (batch_size, rows, num_idx))]


def get_init_inputs():
    return []

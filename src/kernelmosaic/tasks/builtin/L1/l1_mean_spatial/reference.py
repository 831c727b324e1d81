"""Mean over H and W of an NCHW tensor."""

import torch
import torch.nn as nn

batch_size = 32
channels = 256
height = 64
width = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.mean(dim=(2, 3))


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []

"""Conv2d 5x5 on a wide input, no padding."""

import torch
import torch.nn as nn

batch_size = 8
in_channels = 32
out_channels = 64
height = 64
width = 1024


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.op = nn.Conv2d(in_channels, out_channels, kernel_size=5)

    def forward(self, x):
        return self.op(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]

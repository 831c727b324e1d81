"""Conv2d -> AvgPool2d -> sigmoid -> sum."""

import torch
import torch.nn as nn

batch_size = 16
in_channels = 64
out_channels = 128
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1)
        self.pool = nn.AvgPool2d(4)

    def forward(self, x):
        return torch.sigmoid(self.pool(self.conv(x))).sum(dim=(1, 2, 3))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]

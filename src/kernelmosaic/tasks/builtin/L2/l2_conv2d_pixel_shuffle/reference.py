"""Conv2d -> PixelShuffle -> sigmoid."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
in_channels = 64
out_channels = 32
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, 4 * out_channels, kernel_size=3, padding=1)

    def forward(self, x):
        return torch.sigmoid(F.pixel_shuffle(self.conv(x), 2))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]

"""Conv3d -> max over depth -> softmax over channels."""

import torch
import torch.nn as nn

batch_size = 8
in_channels = 16
out_channels = 32
depth = 16
height = 64
width = 64


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size=3)

    def forward(self, x):
        return torch.softmax(torch.amax(self.conv(x), dim=2), dim=1)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]

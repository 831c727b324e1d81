"""Conv2d -> InstanceNorm2d -> divide."""

import torch
import torch.nn as nn

batch_size = 16
in_channels = 64
out_channels = 128
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, divisor: float):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=3)
        self.norm = nn.InstanceNorm2d(out_channels, eps=1e-5)
        self.divisor = divisor

    def forward(self, x):
        return self.norm(self.conv(x)) / self.divisor


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, 2.0]

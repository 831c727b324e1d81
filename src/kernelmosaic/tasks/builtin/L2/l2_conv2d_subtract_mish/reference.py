"""Conv2d -> subtract constant -> Mish."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
in_channels = 64
out_channels = 128
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, shift: float):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=5, padding=2)
        self.shift = shift

    def forward(self, x):
        return F.mish(self.conv(x) - self.shift)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, 0.3]

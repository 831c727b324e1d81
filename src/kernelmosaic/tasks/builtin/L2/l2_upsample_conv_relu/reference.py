"""Nearest upsample x2 -> Conv2d -> ReLU."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
in_channels = 128
out_channels = 64
height = 64
width = 64


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(F.interpolate(x, scale_factor=2.0, mode="nearest")))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]

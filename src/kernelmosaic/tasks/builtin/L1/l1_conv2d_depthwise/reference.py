"""Depthwise Conv2d 3x3."""

import torch
import torch.nn as nn

batch_size = 32
channels = 128
height = 112
width = 112


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.op = nn.Conv2d(channels, channels, kernel_size=3, padding=1, groups=channels)

    def forward(self, x):
        return self.op(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]

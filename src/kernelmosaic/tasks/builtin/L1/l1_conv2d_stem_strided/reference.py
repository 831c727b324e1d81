"""Strided 7x7 Conv2d stem."""

import torch
import torch.nn as nn

batch_size = 32
in_channels = 3
out_channels = 64
height = 224
width = 224


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.op = nn.Conv2d(in_channels, out_channels, kernel_size=7, stride=2, padding=3, bias=False)

    def forward(self, x):
        return self.op(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]

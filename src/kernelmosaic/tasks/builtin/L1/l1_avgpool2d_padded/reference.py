"""AvgPool2d 3x3, stride 1, zero padding counted."""

import torch
import torch.nn as nn

batch_size = 32
channels = 64
height = 128
width = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.op = nn.AvgPool2d(kernel_size=3, stride=1, padding=1)

    def forward(self, x):
        return self.op(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []

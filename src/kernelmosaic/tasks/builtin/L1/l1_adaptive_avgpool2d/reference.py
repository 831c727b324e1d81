"""Adaptive average pooling to 7x7."""

import torch
import torch.nn as nn

batch_size = 32
channels = 256
height = 50
width = 50


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.op = nn.AdaptiveAvgPool2d((7, 7))

    def forward(self, x):
        return self.op(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []

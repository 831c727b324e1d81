"""MaxPool2d with dilation 2."""

import torch
import torch.nn as nn

batch_size = 32
channels = 64
height = 128
width = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.op = nn.MaxPool2d(kernel_size=2, stride=2, dilation=2)

    def forward(self, x):
        return self.op(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return []

"""Conv2d -> ReLU -> residual add."""

import torch
import torch.nn as nn

batch_size = 16
channels = 128
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size=3, padding=1)

    def forward(self, x):
        return x + torch.relu(self.conv(x))


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]

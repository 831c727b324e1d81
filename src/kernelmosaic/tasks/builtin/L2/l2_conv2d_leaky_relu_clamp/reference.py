"""Conv2d -> LeakyReLU -> clamp."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
in_channels = 64
out_channels = 128
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=3, stride=2, padding=1)

    def forward(self, x):
        return torch.clamp(F.leaky_relu(self.conv(x), 0.2), min=-0.5, max=0.5)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]

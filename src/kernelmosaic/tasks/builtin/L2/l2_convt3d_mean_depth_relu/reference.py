"""ConvTranspose3d -> mean over depth -> ReLU."""

import torch
import torch.nn as nn

batch_size = 4
in_channels = 32
out_channels = 64
depth = 16
height = 64
width = 64


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.deconv = nn.ConvTranspose3d(in_channels, out_channels, kernel_size=3, padding=1)

    def forward(self, x):
        return torch.relu(self.deconv(x).mean(dim=2))


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]

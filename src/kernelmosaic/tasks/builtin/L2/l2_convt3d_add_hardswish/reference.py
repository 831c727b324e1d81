"""ConvTranspose3d -> add tensor -> Hardswish."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4
in_channels = 32
out_channels = 16
depth = 16
height = 32
width = 32


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.deconv = nn.ConvTranspose3d(in_channels, out_channels, kernel_size=4, stride=2, padding=1)

    def forward(self, x, skip):
        return F.hardswish(self.deconv(x) + skip)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width), torch.randn(batch_size, out_channels, 2 * depth, 2 * height, 2 * width)]


def get_init_inputs():
    return [in_channels, out_channels]

"""Conv3d with a 1x5x5 kernel and spatial stride."""

import torch
import torch.nn as nn

batch_size = 4
in_channels = 32
out_channels = 64
depth = 16
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.op = nn.Conv3d(in_channels, out_channels, kernel_size=(1, 5, 5), stride=(1, 2, 2), padding=(0, 2, 2))

    def forward(self, x):
        return self.op(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]

"""ConvTranspose2d, stride 3, output_padding, asymmetric kernel."""

import torch
import torch.nn as nn

batch_size = 16
in_channels = 64
out_channels = 32
height = 64
width = 64


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.op = nn.ConvTranspose2d(in_channels, out_channels, kernel_size=(3, 5), stride=3, padding=(1, 2), output_padding=(2, 1))

    def forward(self, x):
        return self.op(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]

"""Conv1d with stride 2 and dilation 4."""

import torch
import torch.nn as nn

batch_size = 32
in_channels = 128
out_channels = 128
length = 16384


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.op = nn.Conv1d(in_channels, out_channels, kernel_size=3, stride=2, dilation=4, bias=False)

    def forward(self, x):
        return self.op(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels]

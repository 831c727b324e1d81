"""AvgPool1d, kernel 8, stride 4."""

import torch
import torch.nn as nn

batch_size = 32
channels = 128
length = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.op = nn.AvgPool1d(kernel_size=8, stride=4)

    def forward(self, x):
        return self.op(x)


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return []

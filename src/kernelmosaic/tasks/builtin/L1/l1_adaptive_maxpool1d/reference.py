"""Adaptive max pooling 1D to 32 bins."""

import torch
import torch.nn as nn

batch_size = 64
channels = 256
length = 10000


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.op = nn.AdaptiveMaxPool1d(32)

    def forward(self, x):
        return self.op(x)


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return []

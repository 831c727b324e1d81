"""Softmax over the channel dimension of a (batch, channels, length) tensor."""

import torch
import torch.nn as nn

batch_size = 32
channels = 512
length = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(batch_size, channels, length) * 3.0]


def get_init_inputs():
    return []

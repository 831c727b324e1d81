"""Per-channel bias added to an NCHW tensor by broadcasting."""

import torch
import torch.nn as nn

batch_size = 16
channels = 128
height = 128
width = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, bias):
        return x + bias.view(1, -1, 1, 1)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width), torch.randn(channels)]


def get_init_inputs():
    return []

"""GroupNorm over 8 channel groups with random affine parameters."""

import torch
import torch.nn as nn

batch_size = 32
channels = 64
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, num_groups: int, num_channels: int):
        super().__init__()
        self.norm = nn.GroupNorm(num_groups, num_channels, eps=1e-5)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.2 * torch.randn(num_channels))
            self.norm.bias.copy_(0.2 * torch.randn(num_channels))

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width) * 2.0 + 1.0]


def get_init_inputs():
    return [8, channels]

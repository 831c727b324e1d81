"""Conv3d -> GroupNorm -> mean."""

import torch
import torch.nn as nn

batch_size = 8
in_channels = 16
out_channels = 32
depth = 16
height = 64
width = 64


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size=3, padding=1)
        self.norm = nn.GroupNorm(8, out_channels, eps=1e-5)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.5 * torch.randn(out_channels))
            self.norm.bias.copy_(0.5 * torch.randn(out_channels))

    def forward(self, x):
        return self.norm(self.conv(x)).mean(dim=(1, 2, 3, 4))


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]

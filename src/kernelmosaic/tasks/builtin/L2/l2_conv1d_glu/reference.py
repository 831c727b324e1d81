"""Conv1d -> GLU."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
in_channels = 128
out_channels = 256
length = 8192


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, 2 * out_channels, kernel_size=3, padding=1)

    def forward(self, x):
        return F.glu(self.conv(x), dim=1)


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels]

"""ConvTranspose1d -> GELU -> LayerNorm over channels."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
in_channels = 128
out_channels = 256
length = 4096


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.deconv = nn.ConvTranspose1d(in_channels, out_channels, kernel_size=4, stride=2, padding=1)
        self.norm = nn.LayerNorm(out_channels, eps=1e-5)

    def forward(self, x):
        y = F.gelu(self.deconv(x))
        return self.norm(y.transpose(1, 2)).transpose(1, 2)


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels]

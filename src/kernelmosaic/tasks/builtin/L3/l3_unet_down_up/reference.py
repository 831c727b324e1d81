"""One-level U-Net: encoder, bottleneck, transposed-conv upsampling, skip concatenation, decoder."""

import torch
import torch.nn as nn

batch_size = 8
in_channels = 3
base = 64
out_channels = 2
height = 256
width = 256


def double_conv(cin: int, cout: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU(), nn.Conv2d(cout, cout, 3, padding=1), nn.ReLU())


class Model(nn.Module):
    def __init__(self, in_channels: int, base: int, out_channels: int):
        super().__init__()
        self.enc = double_conv(in_channels, base)
        self.pool = nn.MaxPool2d(2)
        self.bottleneck = double_conv(base, 2 * base)
        self.up = nn.ConvTranspose2d(2 * base, base, kernel_size=2, stride=2)
        self.dec = double_conv(2 * base, base)
        self.head = nn.Conv2d(base, out_channels, 1)

    def forward(self, x):
        enc = self.enc(x)
        up = self.up(self.bottleneck(self.pool(enc)))
        return self.head(self.dec(torch.cat([enc, up], dim=1)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, base, out_channels]

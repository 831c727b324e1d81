"""ConvTranspose2d -> BatchNorm2d (eval) -> tanh."""

import torch
import torch.nn as nn

batch_size = 16
in_channels = 128
out_channels = 64
height = 64
width = 64


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size=4, stride=2, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)
        with torch.no_grad():
            self.bn.running_mean.copy_(0.1 * torch.randn(out_channels))
            self.bn.running_var.copy_(0.5 + torch.rand(out_channels))
            self.bn.weight.copy_(1.0 + 0.2 * torch.randn(out_channels))
            self.bn.bias.copy_(0.2 * torch.randn(out_channels))

    def forward(self, x):
        return torch.tanh(self.bn(self.deconv(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]

"""Conv1d -> BatchNorm1d (eval) -> ReLU -> MaxPool1d."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
in_channels = 64
out_channels = 128
length = 16384


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size=7, padding=3, bias=False)
        self.bn = nn.BatchNorm1d(out_channels)
        with torch.no_grad():
            self.bn.running_mean.copy_(0.1 * torch.randn(out_channels))
            self.bn.running_var.copy_(0.5 + torch.rand(out_channels))
            self.bn.weight.copy_(1.0 + 0.2 * torch.randn(out_channels))
            self.bn.bias.copy_(0.2 * torch.randn(out_channels))

    def forward(self, x):
        return F.max_pool1d(torch.relu(self.bn(self.conv(x))), kernel_size=2)


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels]

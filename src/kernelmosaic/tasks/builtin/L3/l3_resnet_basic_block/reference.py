"""ResNet basic block (stride 2) with a 1x1 projection shortcut, inference-mode batch norms."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
in_channels = 64
out_channels = 128
height = 56
width = 56


def _randomize_bn(bn: nn.BatchNorm2d) -> None:
    """Give a batch norm non-trivial inference statistics, as a trained network would have."""
    with torch.no_grad():
        bn.running_mean.copy_(0.1 * torch.randn(bn.num_features))
        bn.running_var.copy_(0.5 + torch.rand(bn.num_features))
        bn.weight.copy_(1.0 + 0.1 * torch.randn(bn.num_features))
        bn.bias.copy_(0.1 * torch.randn(bn.num_features))


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.shortcut = nn.Conv2d(in_channels, out_channels, 1, stride=2, bias=False)
        self.bn_short = nn.BatchNorm2d(out_channels)
        for bn in (self.bn1, self.bn2, self.bn_short):
            _randomize_bn(bn)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.bn_short(self.shortcut(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]

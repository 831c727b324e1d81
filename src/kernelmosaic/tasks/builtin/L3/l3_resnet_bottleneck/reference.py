"""ResNet bottleneck block (1x1 reduce, 3x3, 1x1 expand) with an identity shortcut."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
channels = 256
width = 64
height = 56
spatial_width = 56


def _randomize_bn(bn: nn.BatchNorm2d) -> None:
    """Give a batch norm non-trivial inference statistics, as a trained network would have."""
    with torch.no_grad():
        bn.running_mean.copy_(0.1 * torch.randn(bn.num_features))
        bn.running_var.copy_(0.5 + torch.rand(bn.num_features))
        bn.weight.copy_(1.0 + 0.1 * torch.randn(bn.num_features))
        bn.bias.copy_(0.1 * torch.randn(bn.num_features))


class Model(nn.Module):
    def __init__(self, channels: int, width: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, channels, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(channels)
        for bn in (self.bn1, self.bn2, self.bn3):
            _randomize_bn(bn)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = F.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return F.relu(out + x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, spatial_width)]


def get_init_inputs():
    return [channels, width]

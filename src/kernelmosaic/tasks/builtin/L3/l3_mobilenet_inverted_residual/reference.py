"""MobileNetV2 inverted residual block (expand, depthwise, project) with identity shortcut."""

import torch
import torch.nn as nn

batch_size = 32
channels = 64
expansion = 6
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
    def __init__(self, channels: int, expansion: int):
        super().__init__()
        hidden = channels * expansion
        self.block = nn.Sequential(
            nn.Conv2d(channels, hidden, 1, bias=False), nn.BatchNorm2d(hidden), nn.ReLU6(),
            nn.Conv2d(hidden, hidden, 3, padding=1, groups=hidden, bias=False), nn.BatchNorm2d(hidden), nn.ReLU6(),
            nn.Conv2d(hidden, channels, 1, bias=False), nn.BatchNorm2d(channels),
        )
        for m in self.block:
            if isinstance(m, nn.BatchNorm2d):
                _randomize_bn(m)

    def forward(self, x):
        return x + self.block(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, expansion]

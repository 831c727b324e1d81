"""DenseNet dense block: each BN-ReLU-Conv layer's output is concatenated to its input."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
channels = 64
growth_rate = 32
num_layers = 4
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
    def __init__(self, channels: int, growth_rate: int, num_layers: int):
        super().__init__()
        self.norms = nn.ModuleList()
        self.convs = nn.ModuleList()
        for i in range(num_layers):
            cin = channels + i * growth_rate
            self.norms.append(nn.BatchNorm2d(cin))
            self.convs.append(nn.Conv2d(cin, growth_rate, 3, padding=1, bias=False))
            _randomize_bn(self.norms[-1])

    def forward(self, x):
        for norm, conv in zip(self.norms, self.convs, strict=True):
            x = torch.cat([x, conv(F.relu(norm(x)))], dim=1)
        return x


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, growth_rate, num_layers]

"""BatchNorm2d evaluated with fixed running statistics (inference mode)."""

import torch
import torch.nn as nn

batch_size = 32
channels = 64
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, num_features: int):
        super().__init__()
        self.bn = nn.BatchNorm2d(num_features, eps=1e-5)
        with torch.no_grad():
            self.bn.running_mean.copy_(torch.randn(num_features) * 0.5)
            self.bn.running_var.copy_(torch.rand(num_features) * 2.0 + 0.5)
            self.bn.weight.copy_(torch.randn(num_features))
            self.bn.bias.copy_(torch.randn(num_features))

    def forward(self, x):
        return self.bn(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]

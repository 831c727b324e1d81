"""GroupNorm -> Tanh -> HardSwish."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
channels = 64
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.norm = nn.GroupNorm(8, channels, eps=1e-5)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.3 * torch.randn(channels))
            self.norm.bias.copy_(0.3 * torch.randn(channels))

    def forward(self, x):
        return F.hardswish(torch.tanh(self.norm(x)))


def get_inputs():
    return [torch.randn(batch_size, channels, height, width) * 2.0 + 0.5]


def get_init_inputs():
    return [channels]

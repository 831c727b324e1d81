"""PReLU with a learned per-channel negative slope on a (batch, channels, length) tensor."""

import torch
import torch.nn as nn

batch_size = 32
channels = 256
length = 8192


class Model(nn.Module):
    def __init__(self, num_channels: int):
        super().__init__()
        self.prelu = nn.PReLU(num_parameters=num_channels)
        with torch.no_grad():
            self.prelu.weight.copy_(torch.rand(num_channels) * 0.5)

    def forward(self, x):
        return self.prelu(x)


def get_inputs():
    return [torch.randn(batch_size, channels, length)]


def get_init_inputs():
    return [channels]

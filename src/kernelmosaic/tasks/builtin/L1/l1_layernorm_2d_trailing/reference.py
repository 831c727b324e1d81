"""LayerNorm over the (height, width) plane of an NCHW tensor."""

import torch
import torch.nn as nn

batch_size = 16
channels = 64
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, height: int, width: int):
        super().__init__()
        self.norm = nn.LayerNorm((height, width), eps=1e-5)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.1 * torch.randn(height, width))
            self.norm.bias.copy_(0.1 * torch.randn(height, width))

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [height, width]

import torch
import torch.nn as nn

batch_size = 16
in_channels = 64
out_channels = 128
width = 1024
height = 1024


class Model(nn.Module):
    """A 1x1 (pointwise) 2D convolution mixing channels at every pixel; no bias by default."""

    def __init__(self, in_channels: int, out_channels: int, bias: bool = False):
        super().__init__()
        # the attribute name is the reference's own (a Conv2d held as `conv1d`); candidates load weights by it
        self.conv1d = nn.Conv2d(in_channels, out_channels, kernel_size=1, stride=1, padding=0, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv1d(x)


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]

import torch
import torch.nn as nn

batch_size = 128
in_channels = 8
out_channels = 64
height = width = 128
kernel_size = 3
divisor = 2


class Model(nn.Module):
    """Conv2d, division by a constant, LeakyReLU with slope 0.01."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, divisor: float):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.divisor = divisor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x) / self.divisor
        return torch.nn.functional.leaky_relu(x, negative_slope=0.01)


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, divisor]

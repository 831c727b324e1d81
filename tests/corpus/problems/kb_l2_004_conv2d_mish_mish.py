import torch
import torch.nn as nn

batch_size = 64
in_channels = 64
out_channels = 128
height = width = 256
kernel_size = 3


class Model(nn.Module):
    """Conv2d followed by Mish applied twice."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = torch.nn.functional.mish(x)
        return torch.nn.functional.mish(x)


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]

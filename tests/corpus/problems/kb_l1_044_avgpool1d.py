import torch
import torch.nn as nn

batch_size = 64
in_channels = 128
input_length = 65536
kernel_size = 8
stride = 1
padding = 4


class Model(nn.Module):
    """1-D average pooling over the last axis (zero padding counted in each window's mean)."""

    def __init__(self, kernel_size: int, stride: int = 1, padding: int = 0):
        super().__init__()
        self.pool = nn.AvgPool1d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.rand(batch_size, in_channels, input_length)]


def get_init_inputs():
    return [kernel_size, stride, padding]

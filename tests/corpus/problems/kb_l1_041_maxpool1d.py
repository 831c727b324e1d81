import torch
import torch.nn as nn

batch_size = 64
features = 192
sequence_length = 65536
kernel_size = 8
stride = 1
padding = 4
dilation = 3
return_indices = False


class Model(nn.Module):
    """1-D max pooling with a dilated, padded window."""

    def __init__(self, kernel_size: int, stride: int = None, padding: int = 0, dilation: int = 1,
                 return_indices: bool = False):
        super().__init__()
        self.pool = nn.MaxPool1d(kernel_size, stride=stride, padding=padding, dilation=dilation,
                                 return_indices=return_indices)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.rand(batch_size, features, sequence_length)]


def get_init_inputs():
    return [kernel_size, stride, padding, dilation, return_indices]

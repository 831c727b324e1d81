import torch
import torch.nn as nn

batch_size = 32768
in_features = 1024
out_features = 4096
num_groups = 64
bias_shape = (out_features,)


class Model(nn.Module):
    """Linear, Swish (x * sigmoid(x)), a learned bias added, then GroupNorm."""

    def __init__(self, in_features: int, out_features: int, num_groups: int, bias_shape: tuple):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.group_norm = nn.GroupNorm(num_groups, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.matmul(x)
        x = x * torch.sigmoid(x)
        x = x + self.bias
        return self.group_norm(x)


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, num_groups, bias_shape]

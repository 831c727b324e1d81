import torch
import torch.nn as nn

batch_size = 128
in_features = 32768
out_features = 32768
scaling_factor = 2.0


class Model(nn.Module):
    """Linear layer, then Swish (x * sigmoid(x)), then multiplication by a constant factor."""

    def __init__(self, in_features: int, out_features: int, scaling_factor: float):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.matmul(x)
        y = y * torch.sigmoid(y)
        return y * self.scaling_factor


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, scaling_factor]

import torch
import torch.nn as nn

batch_size = 1024
input_size = 8192
hidden_size = 8192
scaling_factor = 2.0


class Model(nn.Module):
    """Linear, then the linear's output plus its scaled sigmoid (a residual add)."""

    def __init__(self, input_size: int, hidden_size: int, scaling_factor: float):
        super().__init__()
        self.gemm = nn.Linear(input_size, hidden_size)
        self.scaling_factor = scaling_factor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.gemm(x)
        return y + torch.sigmoid(y) * self.scaling_factor


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, scaling_factor]

import torch
import torch.nn as nn
from torch.distributions import Pareto

batch_size = 32768
input_shape = (32768,)
dim = 1


class Model(nn.Module):
    """Mean squared error between predictions and targets (a scalar)."""

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.mean((predictions - targets) ** 2)


def get_inputs():
    heavy = Pareto(0.01, 1.5)
    return [heavy.sample((batch_size, *input_shape)), heavy.sample((batch_size, *input_shape))]


def get_init_inputs():
    return []

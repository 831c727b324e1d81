import torch
import torch.nn as nn
from torch.distributions import Pareto

batch_size = 32768
input_shape = (32768,)
dim = 1


class Model(nn.Module):
    """Mean hinge loss; the (batch,) targets of +1/-1 broadcast along the last dimension."""

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.mean(torch.clamp(1 - predictions * targets, min=0))


def get_inputs():
    predictions = Pareto(0.01, 1.5).sample((batch_size, *input_shape))
    targets = torch.randint(0, 2, (batch_size,)).float() * 2 - 1
    return [predictions, targets]


def get_init_inputs():
    return []

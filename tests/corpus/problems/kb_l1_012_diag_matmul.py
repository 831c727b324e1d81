import torch
import torch.nn as nn

N = 4096
M = 4096


class Model(nn.Module):
    """diag(A) @ B: every row of B scaled by the matching entry of the vector A."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.diag(A) @ B


def get_inputs():
    return [torch.randn(N), torch.randn(N, M)]


def get_init_inputs():
    return []

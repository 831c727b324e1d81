import torch
import torch.nn as nn

M = 256 * 8
K = 131072 * 8


class Model(nn.Module):
    """A (M, K) times a column vector B (K, 1)."""

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, 1)]


def get_init_inputs():
    return []

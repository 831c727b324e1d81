import torch
import torch.nn as nn

M = 1024 * 2
K = 4096 * 2
N = 2048 * 2


class Model(nn.Module):
    """C = A @ B with A (M, K) and B (K, N)."""

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []

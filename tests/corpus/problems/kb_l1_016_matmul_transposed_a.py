import torch
import torch.nn as nn

M = 1024 * 2
K = 4096 * 2
N = 2048 * 2


class Model(nn.Module):
    """C = A^T @ B, where A is stored (K, M) and B is (K, N)."""

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A.T, B)


def get_inputs():
    return [torch.rand(K, M), torch.rand(K, N)]


def get_init_inputs():
    return []

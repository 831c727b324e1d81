import torch
import torch.nn as nn

M = 1024 * 2
K = 4096 * 2
N = 2048 * 2


class Model(nn.Module):
    """C = A^T @ B^T, where A is stored (K, M) and B is stored (N, K)."""

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A.T, B.T)


def get_inputs():
    return [torch.rand(K, M), torch.rand(N, K)]


def get_init_inputs():
    return []

"""Scaled matmul plus scaled matrix (addmm)."""

import torch
import torch.nn as nn

size_m = 4096
size_k = 2048
size_n = 4096


class Model(nn.Module):
    def __init__(self, beta: float, alpha: float):
        super().__init__()
        self.beta = beta
        self.alpha = alpha

    def forward(self, c, a, b):
        return torch.addmm(c, a, b, beta=self.beta, alpha=self.alpha)


def get_inputs():
    return [torch.randn(size_m, size_n), torch.randn(size_m, size_k), torch.randn(size_k, size_n)]


def get_init_inputs():
    return [0.5, 2.0]

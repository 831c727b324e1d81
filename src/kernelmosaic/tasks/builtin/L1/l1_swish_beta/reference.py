"""Swish with a fixed beta, applied elementwise to a 2D tensor."""

import torch
import torch.nn as nn

batch_size = 4096
dim = 8192


class Model(nn.Module):
    def __init__(self, beta: float):
        super().__init__()
        self.beta = beta

    def forward(self, x):
        return x * torch.sigmoid(self.beta * x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [1.702]

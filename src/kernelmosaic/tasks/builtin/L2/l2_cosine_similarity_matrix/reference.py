"""Normalize rows -> similarity matmul -> temperature."""

import torch
import torch.nn as nn
import torch.nn.functional as F

num_a = 8192
num_b = 8192
dim = 512


class Model(nn.Module):
    def __init__(self, temperature: float):
        super().__init__()
        self.temperature = temperature

    def forward(self, a, b):
        return F.normalize(a, dim=1) @ F.normalize(b, dim=1).T / self.temperature


def get_inputs():
    return [torch.randn(num_a, dim), torch.randn(num_b, dim)]


def get_init_inputs():
    return [0.07]

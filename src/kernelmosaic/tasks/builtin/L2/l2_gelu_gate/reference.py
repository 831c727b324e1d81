"""GELU-gated product (GeGLU activation)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8192
dim = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, gate, value):
        return F.gelu(gate) * value


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randn(batch_size, dim)]


def get_init_inputs():
    return []

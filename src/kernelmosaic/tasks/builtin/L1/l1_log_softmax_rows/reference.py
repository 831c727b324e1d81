"""Log-softmax over dimension 1."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
dim = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.log_softmax(x, dim=1)


def get_inputs():
    return [torch.randn(batch_size, dim) * 5.0]


def get_init_inputs():
    return []

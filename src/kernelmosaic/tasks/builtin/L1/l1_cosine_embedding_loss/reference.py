"""Cosine embedding loss."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8192
dim = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x1, x2, y):
        return F.cosine_embedding_loss(x1, x2, y, margin=0.2)


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randn(batch_size, dim), torch.randint(0, 2, (batch_size,)).float() * 2.0 - 1.0]


def get_init_inputs():
    return []

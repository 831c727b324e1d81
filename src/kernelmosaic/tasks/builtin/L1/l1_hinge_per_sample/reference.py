"""Per-sample hinge loss with +-1 labels."""

import torch
import torch.nn as nn

batch_size = 8192
dim = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, pred, target):
        return torch.clamp(1.0 - pred * target, min=0.0).mean(dim=1)


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randint(0, 2, (batch_size, dim)).float() * 2.0 - 1.0]


def get_init_inputs():
    return []

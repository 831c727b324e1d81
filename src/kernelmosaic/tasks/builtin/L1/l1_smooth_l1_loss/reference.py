"""Smooth L1 loss (beta = 1)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8192
dim = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, pred, target):
        return F.smooth_l1_loss(pred, target, beta=1.0)


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randn(batch_size, dim)]


def get_init_inputs():
    return []

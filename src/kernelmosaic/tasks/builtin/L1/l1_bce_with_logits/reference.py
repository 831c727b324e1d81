"""Binary cross-entropy with logits."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8192
dim = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, target):
        return F.binary_cross_entropy_with_logits(logits, target)


def get_inputs():
    return [torch.randn(batch_size, dim) * 3.0, torch.rand(batch_size, dim)]


def get_init_inputs():
    return []

"""Negative log-likelihood loss."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16384
num_classes = 2000


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, log_probs, target):
        return F.nll_loss(log_probs, target)


def get_inputs():
    log_probs = torch.log_softmax(torch.randn(batch_size, num_classes) * 2.0, dim=1)
    return [log_probs, torch.randint(0, num_classes, (batch_size,))]


def get_init_inputs():
    return []

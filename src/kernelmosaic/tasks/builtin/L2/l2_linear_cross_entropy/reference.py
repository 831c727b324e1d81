"""Linear classifier head -> cross-entropy."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8192
hidden = 2048
num_classes = 8192


class Model(nn.Module):
    def __init__(self, hidden: int, num_classes: int):
        super().__init__()
        self.head = nn.Linear(hidden, num_classes)

    def forward(self, x, target):
        return F.cross_entropy(self.head(x), target)


def get_inputs():
    return [torch.randn(batch_size, hidden), torch.randint(0, num_classes, (batch_size,))]


def get_init_inputs():
    return [hidden, num_classes]

"""One-hot encoding to float."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
seq_len = 1024
num_classes = 1024


class Model(nn.Module):
    def __init__(self, num_classes: int):
        super().__init__()
        self.num_classes = num_classes

    def forward(self, labels):
        return F.one_hot(labels, num_classes=self.num_classes).to(torch.float32)


def get_inputs():
    return [torch.randint(0, num_classes, (batch_size, seq_len))]


def get_init_inputs():
    return [num_classes]

"""Linear -> L2 normalize (embedding head)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16384
in_features = 4096
out_features = 1024


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return F.normalize(self.linear(x), p=2.0, dim=1)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]

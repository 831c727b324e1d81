"""Linear -> Swish -> Dropout (p = 0)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8192
in_features = 4096
out_features = 4096


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.dropout = nn.Dropout(p=0.0)

    def forward(self, x):
        return self.dropout(F.silu(self.linear(x)))


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]

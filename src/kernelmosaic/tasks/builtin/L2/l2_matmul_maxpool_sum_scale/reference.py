"""Linear -> MaxPool1d over features -> sum -> scale."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8192
in_features = 4096
out_features = 4096


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int, scale: float):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        return F.max_pool1d(self.linear(x).unsqueeze(1), kernel_size=4).squeeze(1).sum(dim=1) * self.scale


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, 0.5]

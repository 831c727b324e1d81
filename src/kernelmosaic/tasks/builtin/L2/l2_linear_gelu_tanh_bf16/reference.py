"""bfloat16 Linear -> GELU (tanh)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
in_features = 4096
out_features = 16384


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features).to(torch.bfloat16)

    def forward(self, x):
        return F.gelu(self.linear(x), approximate="tanh")


def get_inputs():
    return [torch.randn(batch_size, in_features, dtype=torch.bfloat16)]


def get_init_inputs():
    return [in_features, out_features]

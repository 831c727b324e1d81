"""Half-precision Linear -> ReLU."""

import torch
import torch.nn as nn

batch_size = 8192
in_features = 4096
out_features = 8192


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features).to(torch.float16)

    def forward(self, x):
        return torch.relu(self.linear(x))


def get_inputs():
    return [torch.randn(batch_size, in_features, dtype=torch.float16)]


def get_init_inputs():
    return [in_features, out_features]

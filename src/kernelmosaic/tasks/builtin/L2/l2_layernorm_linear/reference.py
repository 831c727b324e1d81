"""LayerNorm -> Linear (pre-norm projection)."""

import torch
import torch.nn as nn

batch_size = 8192
in_features = 4096
out_features = 4096


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.norm = nn.LayerNorm(in_features, eps=1e-5)
        self.linear = nn.Linear(in_features, out_features)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.1 * torch.randn(in_features))
            self.norm.bias.copy_(0.1 * torch.randn(in_features))

    def forward(self, x):
        return self.linear(self.norm(x))


def get_inputs():
    return [torch.randn(batch_size, in_features) * 3.0 + 1.0]


def get_init_inputs():
    return [in_features, out_features]

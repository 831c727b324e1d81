"""Linear -> BatchNorm1d (eval) -> ReLU."""

import torch
import torch.nn as nn

batch_size = 8192
in_features = 4096
out_features = 4096


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.bn = nn.BatchNorm1d(out_features)
        with torch.no_grad():
            self.bn.running_mean.copy_(0.1 * torch.randn(out_features))
            self.bn.running_var.copy_(0.5 + torch.rand(out_features))
            self.bn.weight.copy_(1.0 + 0.2 * torch.randn(out_features))
            self.bn.bias.copy_(0.2 * torch.randn(out_features))

    def forward(self, x):
        return torch.relu(self.bn(self.linear(x)))


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]

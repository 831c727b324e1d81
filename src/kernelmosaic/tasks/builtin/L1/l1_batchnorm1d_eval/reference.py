"""BatchNorm1d over feature columns evaluated with fixed running statistics."""

import torch
import torch.nn as nn

batch_size = 16384
features = 4096


class Model(nn.Module):
    def __init__(self, num_features: int):
        super().__init__()
        self.bn = nn.BatchNorm1d(num_features, eps=1e-5)
        with torch.no_grad():
            self.bn.running_mean.copy_(torch.randn(num_features))
            self.bn.running_var.copy_(torch.rand(num_features) + 0.25)
            self.bn.weight.copy_(torch.randn(num_features))
            self.bn.bias.copy_(torch.randn(num_features))

    def forward(self, x):
        return self.bn(x)


def get_inputs():
    return [torch.randn(batch_size, features)]


def get_init_inputs():
    return [features]

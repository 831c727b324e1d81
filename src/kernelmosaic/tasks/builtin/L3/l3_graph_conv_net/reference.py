"""Two-layer graph convolutional network with a dense normalized adjacency matrix."""

import torch
import torch.nn as nn

num_nodes = 8192
in_features = 512
hidden = 256
num_classes = 64
avg_degree = 16


class Model(nn.Module):
    def __init__(self, in_features: int, hidden: int, num_classes: int):
        super().__init__()
        self.w1 = nn.Linear(in_features, hidden, bias=False)
        self.b1 = nn.Parameter(torch.zeros(hidden))
        self.w2 = nn.Linear(hidden, num_classes, bias=False)
        self.b2 = nn.Parameter(torch.zeros(num_classes))

    def forward(self, features, adj):
        h = torch.relu(adj @ self.w1(features) + self.b1)
        return adj @ self.w2(h) + self.b2


def get_inputs():
    a = (torch.rand(num_nodes, num_nodes) < avg_degree / num_nodes).float()
    a = torch.clamp(a + a.T + torch.eye(num_nodes), max=1.0)
    d = a.sum(dim=1).rsqrt()
    return [torch.randn(num_nodes, in_features), d[:, None] * a * d[None, :]]


def get_init_inputs():
    return [in_features, hidden, num_classes]

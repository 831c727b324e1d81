"""Deep multilayer perceptron: eight Linear+ReLU layers and a linear classifier."""

import torch
import torch.nn as nn

batch_size = 256
in_features = 2048
hidden = 2048
num_layers = 8
out_features = 1000


class Model(nn.Module):
    def __init__(self, in_features: int, hidden: int, num_layers: int, out_features: int):
        super().__init__()
        layers = []
        width = in_features
        for _ in range(num_layers):
            layers += [nn.Linear(width, hidden), nn.ReLU()]
            width = hidden
        layers.append(nn.Linear(width, out_features))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, hidden, num_layers, out_features]

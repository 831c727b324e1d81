import torch
import torch.nn as nn

batch_size = 1
input_size = 1000
hidden_layer_sizes = [2000, 2000]
output_size = 10


class Model(nn.Module):
    """A shallow, wide MLP: two hidden layers of 2000 with ReLU, then a Linear to 10."""

    def __init__(self, input_size, hidden_layer_sizes, output_size):
        super().__init__()
        layers = []
        current = input_size
        for hidden in hidden_layer_sizes:
            layers.append(nn.Linear(current, hidden))
            layers.append(nn.ReLU())
            current = hidden
        layers.append(nn.Linear(current, output_size))
        self.network = nn.Sequential(*layers)

    def forward(self, x):
        return self.network(x)


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_layer_sizes, output_size]

import torch
import torch.nn as nn

batch_size = 1024
input_size = 8192
hidden_layer_sizes = [1024] * 16
output_size = 8192


class Model(nn.Module):
    """Sixteen narrow hidden layers with ReLU, then a wide output layer."""

    def __init__(self, input_size: int, hidden_layer_sizes: list, output_size: int):
        super().__init__()
        layers = []
        width = input_size
        for hidden in hidden_layer_sizes:
            layers += [nn.Linear(width, hidden), nn.ReLU()]
            width = hidden
        layers.append(nn.Linear(width, output_size))
        self.network = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.network(x)


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_layer_sizes, output_size]

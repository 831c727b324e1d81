import torch
import torch.nn as nn

batch_size = 1024
in_features = 8192
out_features = 8192
add_value_shape = (out_features,)


class Model(nn.Module):
    """Linear, a learned value added, then Swish, Tanh, exact GELU and Hardtanh(-1, 1) in turn."""

    def __init__(self, in_features: int, out_features: int, add_value_shape: tuple):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.add_value = nn.Parameter(torch.randn(add_value_shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.matmul(x) + self.add_value
        x = x * torch.sigmoid(x)
        x = torch.tanh(x)
        x = torch.nn.functional.gelu(x)
        return torch.nn.functional.hardtanh(x, min_val=-1, max_val=1)


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, add_value_shape]

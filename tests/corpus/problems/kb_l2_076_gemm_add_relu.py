import torch
import torch.nn as nn

batch_size = 1024
in_features = 8192
out_features = 8192
bias_shape = (out_features,)


class Model(nn.Module):
    """A bias-free GEMM, a separate bias added, then ReLU."""

    def __init__(self, in_features: int, out_features: int, bias_shape: tuple):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.gemm(x)
        x = x + self.bias
        return torch.relu(x)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, bias_shape]

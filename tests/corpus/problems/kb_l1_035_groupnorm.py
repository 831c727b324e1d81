import torch
import torch.nn as nn

batch_size = 112
features = 64
num_groups = 8
dim1 = 512
dim2 = 512


class Model(nn.Module):
    """GroupNorm with affine parameters over a (batch, features, d1, d2) tensor."""

    def __init__(self, num_features: int, num_groups: int):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups=num_groups, num_channels=num_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gn(x)


def get_inputs():
    return [torch.rand(batch_size, features, dim1, dim2)]


def get_init_inputs():
    return [features, num_groups]

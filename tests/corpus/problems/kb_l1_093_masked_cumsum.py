import torch
import torch.nn as nn

batch_size = 32768
input_shape = (32768,)
dim = 1


class Model(nn.Module):
    """Prefix sum along one dimension counting only the elements a boolean mask keeps."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x * mask, dim=self.dim)


def get_inputs():
    x = torch.rand(batch_size, *input_shape)
    return [x, torch.randint(0, 2, x.shape).bool()]


def get_init_inputs():
    return [dim]

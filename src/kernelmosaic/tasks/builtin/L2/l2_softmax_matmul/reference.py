"""Row softmax -> batched matmul."""

import torch
import torch.nn as nn

batch_size = 64
size_m = 1024
size_n = 1024
size_k = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, scores, values):
        return torch.bmm(torch.softmax(scores, dim=-1), values)


def get_inputs():
    return [torch.randn(batch_size, size_m, size_n) * 3.0, torch.randn(batch_size, size_n, size_k)]


def get_init_inputs():
    return []

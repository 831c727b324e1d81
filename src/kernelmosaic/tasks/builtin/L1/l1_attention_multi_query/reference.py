"""Multi-query attention: all query heads attend with one shared key/value head."""

import torch
import torch.nn as nn

batch_size = 16
num_heads = 32
seq_len = 1024
head_dim = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        scores = torch.matmul(q, k.transpose(-2, -1)) / (q.shape[-1] ** 0.5)
        return torch.matmul(torch.softmax(scores, dim=-1), v)


def get_inputs():
    return [torch.randn(batch_size, num_heads, seq_len, head_dim), torch.randn(batch_size, 1, seq_len, head_dim), torch.randn(batch_size, 1, seq_len, head_dim)]


def get_init_inputs():
    return []

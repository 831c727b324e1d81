"""Scaled dot-product attention written out with explicit matmuls and softmax."""

import torch
import torch.nn as nn

batch_size = 16
num_heads = 16
seq_len = 1024
head_dim = 64


class Model(nn.Module):
    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, q, k, v):
        scores = torch.matmul(q, k.transpose(-2, -1)) * self.scale
        return torch.matmul(torch.softmax(scores, dim=-1), v)


def get_inputs():
    return [torch.randn(batch_size, num_heads, seq_len, head_dim), torch.randn(batch_size, num_heads, seq_len, head_dim), torch.randn(batch_size, num_heads, seq_len, head_dim)]


def get_init_inputs():
    return [0.125]

"""Attention with a per-head additive bias on the attention scores."""

import torch
import torch.nn as nn

batch_size = 8
num_heads = 16
seq_len = 1024
head_dim = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v, bias):
        scores = torch.matmul(q, k.transpose(-2, -1)) / (q.shape[-1] ** 0.5) + bias.unsqueeze(0)
        return torch.matmul(torch.softmax(scores, dim=-1), v)


def get_inputs():
    return [torch.randn(batch_size, num_heads, seq_len, head_dim), torch.randn(batch_size, num_heads, seq_len, head_dim), torch.randn(batch_size, num_heads, seq_len, head_dim), torch.randn(num_heads, seq_len, seq_len)]


def get_init_inputs():
    return []

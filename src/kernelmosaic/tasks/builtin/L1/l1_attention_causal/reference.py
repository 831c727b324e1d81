"""Causal scaled dot-product attention."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
num_heads = 16
seq_len = 1024
head_dim = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def get_inputs():
    return [torch.randn(batch_size, num_heads, seq_len, head_dim), torch.randn(batch_size, num_heads, seq_len, head_dim), torch.randn(batch_size, num_heads, seq_len, head_dim)]


def get_init_inputs():
    return []

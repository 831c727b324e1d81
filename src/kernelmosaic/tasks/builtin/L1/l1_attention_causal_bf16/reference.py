"""Causal scaled dot-product attention with bfloat16 inputs and output."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
num_heads = 16
seq_len = 2048
head_dim = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def get_inputs():
    return [torch.randn(batch_size, num_heads, seq_len, head_dim, dtype=torch.bfloat16), torch.randn(batch_size, num_heads, seq_len, head_dim, dtype=torch.bfloat16), torch.randn(batch_size, num_heads, seq_len, head_dim, dtype=torch.bfloat16)]


def get_init_inputs():
    return []

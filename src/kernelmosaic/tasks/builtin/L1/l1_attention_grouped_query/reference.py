"""Causal grouped-query attention: groups of query heads share one key/value head."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8
num_heads = 32
num_kv_heads = 8
seq_len = 2048
head_dim = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        group = q.shape[1] // k.shape[1]
        k = k.repeat_interleave(group, dim=1)
        v = v.repeat_interleave(group, dim=1)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def get_inputs():
    return [torch.randn(batch_size, num_heads, seq_len, head_dim), torch.randn(batch_size, num_kv_heads, seq_len, head_dim), torch.randn(batch_size, num_kv_heads, seq_len, head_dim)]


def get_init_inputs():
    return []

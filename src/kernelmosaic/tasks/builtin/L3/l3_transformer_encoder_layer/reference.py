"""Post-norm transformer encoder layer built from nn.Linear, softmax attention and LayerNorm."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
seq_len = 512
d_model = 768
num_heads = 12
ffn_dim = 3072


class Model(nn.Module):
    def __init__(self, d_model: int, num_heads: int, ffn_dim: int):
        super().__init__()
        self.num_heads = num_heads
        self.q = nn.Linear(d_model, d_model)
        self.k = nn.Linear(d_model, d_model)
        self.v = nn.Linear(d_model, d_model)
        self.out = nn.Linear(d_model, d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.fc1 = nn.Linear(d_model, ffn_dim)
        self.fc2 = nn.Linear(ffn_dim, d_model)
        self.norm2 = nn.LayerNorm(d_model)

    def _heads(self, t):
        b, s, d = t.shape
        return t.view(b, s, self.num_heads, d // self.num_heads).transpose(1, 2)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self._heads(self.q(x)), self._heads(self.k(x)), self._heads(self.v(x))
        scores = torch.matmul(q, k.transpose(-2, -1)) / (q.shape[-1] ** 0.5)
        att = torch.matmul(torch.softmax(scores, dim=-1), v).transpose(1, 2).reshape(b, s, d)
        h = self.norm1(x + self.out(att))
        return self.norm2(h + self.fc2(F.gelu(self.fc1(h))))


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model)]


def get_init_inputs():
    return [d_model, num_heads, ffn_dim]

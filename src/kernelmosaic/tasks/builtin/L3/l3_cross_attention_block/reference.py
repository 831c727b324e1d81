"""Pre-norm cross-attention sublayer plus feed-forward sublayer of a transformer decoder."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
tgt_len = 256
src_len = 1024
d_model = 512
num_heads = 8


class Model(nn.Module):
    def __init__(self, d_model: int, num_heads: int):
        super().__init__()
        self.num_heads = num_heads
        self.ln1 = nn.LayerNorm(d_model)
        self.wq = nn.Linear(d_model, d_model)
        self.wk = nn.Linear(d_model, d_model)
        self.wv = nn.Linear(d_model, d_model)
        self.wo = nn.Linear(d_model, d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.ff1 = nn.Linear(d_model, 4 * d_model)
        self.ff2 = nn.Linear(4 * d_model, d_model)

    def _split(self, t):
        return t.view(t.shape[0], t.shape[1], self.num_heads, -1).transpose(1, 2)

    def forward(self, x, memory):
        q = self._split(self.wq(self.ln1(x)))
        k, v = self._split(self.wk(memory)), self._split(self.wv(memory))
        att = F.scaled_dot_product_attention(q, k, v)
        h = x + self.wo(att.transpose(1, 2).reshape(x.shape))
        return h + self.ff2(F.relu(self.ff1(self.ln2(h))))


def get_inputs():
    return [torch.randn(batch_size, tgt_len, d_model), torch.randn(batch_size, src_len, d_model)]


def get_init_inputs():
    return [d_model, num_heads]

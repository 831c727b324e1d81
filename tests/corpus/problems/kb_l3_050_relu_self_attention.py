import math

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
max_seqlen = 1024
n_embd = 768
n_head = 12


class Model(nn.Module):
    """Causal multi-head self-attention with ReLU in place of softmax (c_proj is defined but unused)."""

    def __init__(self, n_embd, n_head, max_seqlen):
        super().__init__()
        assert n_embd % n_head == 0
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        mask = torch.tril(torch.ones(max_seqlen, max_seqlen)).view(1, 1, max_seqlen, max_seqlen)
        self.register_buffer("bias", mask)
        self.n_head = n_head
        self.n_embd = n_embd

    def forward(self, x):
        B, T, C = x.size()
        hs = C // self.n_head
        q, k, v = (t.view(B, T, self.n_head, hs).transpose(1, 2) for t in self.c_attn(x).split(self.n_embd, dim=2))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(hs)
        att = F.relu(att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf")))
        return (att @ v).transpose(1, 2).contiguous().view(B, T, C)


def get_inputs():
    return [torch.rand(batch_size, max_seqlen, n_embd)]


def get_init_inputs():
    return [n_embd, n_head, max_seqlen]

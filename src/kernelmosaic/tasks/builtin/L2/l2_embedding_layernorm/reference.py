"""Token + position embedding -> LayerNorm."""

import torch
import torch.nn as nn

batch_size = 32
seq_len = 1024
vocab_size = 30000
embed_dim = 1024
max_positions = 2048


class Model(nn.Module):
    def __init__(self, vocab_size: int, embed_dim: int, max_positions: int):
        super().__init__()
        self.tokens = nn.Embedding(vocab_size, embed_dim)
        self.positions = nn.Embedding(max_positions, embed_dim)
        self.norm = nn.LayerNorm(embed_dim, eps=1e-5)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.1 * torch.randn(embed_dim))
            self.norm.bias.copy_(0.1 * torch.randn(embed_dim))

    def forward(self, ids):
        positions = torch.arange(ids.shape[1], device=ids.device)
        return self.norm(self.tokens(ids) + self.positions(positions))


def get_inputs():
    return [torch.randint(0, vocab_size, (batch_size, seq_len))]


def get_init_inputs():
    return [vocab_size, embed_dim, max_positions]

"""Two-layer GRU over a sequence, returning the top layer's outputs."""

import torch
import torch.nn as nn

batch_size = 32
seq_len = 128
input_size = 256
hidden_size = 512


class Model(nn.Module):
    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.gru = nn.GRU(input_size, hidden_size, num_layers=2, batch_first=True)

    def forward(self, x):
        out, _ = self.gru(x)
        return out


def get_inputs():
    return [torch.randn(batch_size, seq_len, input_size)]


def get_init_inputs():
    return [input_size, hidden_size]

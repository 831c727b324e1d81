"""MLP-Mixer layer: token-mixing MLP then channel-mixing MLP, each pre-normalized with a residual."""

import torch
import torch.nn as nn

batch_size = 32
num_tokens = 196
channels = 768
token_hidden = 384
channel_hidden = 3072


class Model(nn.Module):
    def __init__(self, num_tokens: int, channels: int, token_hidden: int, channel_hidden: int):
        super().__init__()
        self.ln1 = nn.LayerNorm(channels)
        self.token_mlp = nn.Sequential(nn.Linear(num_tokens, token_hidden), nn.GELU(),
                                       nn.Linear(token_hidden, num_tokens))
        self.ln2 = nn.LayerNorm(channels)
        self.channel_mlp = nn.Sequential(nn.Linear(channels, channel_hidden), nn.GELU(),
                                         nn.Linear(channel_hidden, channels))

    def forward(self, x):
        x = x + self.token_mlp(self.ln1(x).transpose(1, 2)).transpose(1, 2)
        return x + self.channel_mlp(self.ln2(x))


def get_inputs():
    return [torch.randn(batch_size, num_tokens, channels)]


def get_init_inputs():
    return [num_tokens, channels, token_hidden, channel_hidden]

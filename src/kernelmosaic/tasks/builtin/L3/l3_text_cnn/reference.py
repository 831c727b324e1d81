"""TextCNN: embeddings, parallel 1D convolutions of several widths, max over time, linear classifier."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
seq_len = 512
vocab_size = 20000
embed_dim = 256
num_filters = 128
num_classes = 5


class Model(nn.Module):
    def __init__(self, vocab_size: int, embed_dim: int, num_filters: int, num_classes: int):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed_dim)
        self.convs = nn.ModuleList(nn.Conv1d(embed_dim, num_filters, k) for k in (3, 4, 5))
        self.fc = nn.Linear(3 * num_filters, num_classes)

    def forward(self, ids):
        e = self.embed(ids).transpose(1, 2)
        pooled = [F.relu(conv(e)).amax(dim=2) for conv in self.convs]
        return self.fc(torch.cat(pooled, dim=1))


def get_inputs():
    return [torch.randint(0, vocab_size, (batch_size, seq_len))]


def get_init_inputs():
    return [vocab_size, embed_dim, num_filters, num_classes]

"""Minimal vision transformer: patch embedding, class token, one pre-norm block, classifier head."""

import torch
import torch.nn as nn

batch_size = 32
image_size = 224
patch_size = 16
d_model = 384
num_heads = 6
num_classes = 1000


class Model(nn.Module):
    def __init__(self, image_size: int, patch_size: int, d_model: int, num_heads: int, num_classes: int):
        super().__init__()
        num_patches = (image_size // patch_size) ** 2
        self.patch = nn.Conv2d(3, d_model, kernel_size=patch_size, stride=patch_size)
        self.cls = nn.Parameter(0.02 * torch.randn(1, 1, d_model))
        self.pos = nn.Parameter(0.02 * torch.randn(1, num_patches + 1, d_model))
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, num_heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))
        self.ln_out = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, num_classes)

    def forward(self, x):
        t = self.patch(x).flatten(2).transpose(1, 2)
        t = torch.cat([self.cls.expand(t.shape[0], -1, -1), t], dim=1) + self.pos
        n = self.ln1(t)
        t = t + self.attn(n, n, n, need_weights=False)[0]
        t = t + self.mlp(self.ln2(t))
        return self.head(self.ln_out(t[:, 0]))


def get_inputs():
    return [torch.randn(batch_size, 3, image_size, image_size)]


def get_init_inputs():
    return [image_size, patch_size, d_model, num_heads, num_classes]

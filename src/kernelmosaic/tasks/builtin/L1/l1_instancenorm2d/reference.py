"""InstanceNorm2d (no affine, no running stats): per-sample, per-channel spatial normalization."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
channels = 64
height = 128
width = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.instance_norm(x, eps=1e-5)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width) * 3.0 - 1.0]


def get_init_inputs():
    return []

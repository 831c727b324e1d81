# corpus: problem=kb_l1_088_mingpt_new_gelu device=cpu expect=rejected policy=kernelbench
# style: torch.compile of the reference math inside ModelNew is the only compute (no kernel of the candidate's own)
# class: hack:torch_compile
import math

import torch
import torch.nn as nn


def _gelu(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.gelu = torch.compile(_gelu)

    def forward(self, x):
        return self.gelu(x)

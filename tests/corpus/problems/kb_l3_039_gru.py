import torch
import torch.nn as nn

batch_size = 3
seq_len = 512
input_size = 64
hidden_size = 128
num_layers = 6


class Model(nn.Module):
    """A multi-layer GRU (sequence first); returns the last layer's output at every step."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 3, bias: bool = True,
                 batch_first: bool = False):
        super().__init__()
        self.gru = nn.GRU(input_size, hidden_size, num_layers, bias, batch_first, dropout=0, bidirectional=False)

    def forward(self, x: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
        output, _ = self.gru(x, h0)
        return output


def get_inputs():
    return [torch.rand(seq_len, batch_size, input_size), torch.rand(num_layers, batch_size, hidden_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_layers]

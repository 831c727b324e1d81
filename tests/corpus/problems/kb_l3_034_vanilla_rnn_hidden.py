import torch
import torch.nn as nn

batch_size = 8
input_size = 1024
hidden_size = 256
output_size = 128
sequence_length = 256


class Model(nn.Module):
    """An Elman RNN over a whole sequence: tanh(i2h([x_t, h])) each step, every step's h2o output stacked."""

    def __init__(self, input_size: int, hidden_size: int, output_size: int):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.output_size = output_size
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)
        self.tanh = nn.Tanh()

    def forward(self, x: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
        hidden = h0.to(x.device)
        steps = []
        for t in range(x.size(0)):
            hidden = self.tanh(self.i2h(torch.cat((x[t], hidden), dim=1)))
            steps.append(self.h2o(hidden))
        return torch.stack(steps, dim=0)


def get_inputs():
    return [torch.rand(sequence_length, batch_size, input_size), torch.rand(batch_size, hidden_size)]


def get_init_inputs():
    return [input_size, hidden_size, output_size]

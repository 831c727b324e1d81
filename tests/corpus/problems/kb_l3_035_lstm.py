import torch
import torch.nn as nn

batch_size = 10
sequence_length = 512
input_size = 128
hidden_size = 256
num_layers = 6
output_size = 10
dropout = 0.0


class Model(nn.Module):
    """A multi-layer LSTM (batch first) whose last step goes through a Linear head; missing initial states are
    drawn from a normal distribution."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int, output_size: int, dropout: float = 0.0):
        super().__init__()
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True, dropout=dropout,
                            bidirectional=False)
        self.fc = nn.Linear(hidden_size, output_size)

    def forward(self, x: torch.Tensor, h0: torch.Tensor | None = None, c0: torch.Tensor | None = None) -> torch.Tensor:
        state_shape = (self.num_layers, x.size(0), self.hidden_size)
        if h0 is None:
            h0 = torch.randn(state_shape, device=x.device, dtype=x.dtype)
        if c0 is None:
            c0 = torch.randn(state_shape, device=x.device, dtype=x.dtype)
        out, _ = self.lstm(x, (h0, c0))
        return self.fc(out[:, -1, :])


def get_inputs():
    return [torch.rand(batch_size, sequence_length, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, num_layers, output_size, dropout]

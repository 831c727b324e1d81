"""A tiny three-stage ResNet classifier with inference-mode batch norms."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
image_size = 64
num_classes = 100


def _randomize_bn(bn: nn.BatchNorm2d) -> None:
    """Give a batch norm non-trivial inference statistics, as a trained network would have."""
    with torch.no_grad():
        bn.running_mean.copy_(0.1 * torch.randn(bn.num_features))
        bn.running_var.copy_(0.5 + torch.rand(bn.num_features))
        bn.weight.copy_(1.0 + 0.1 * torch.randn(bn.num_features))
        bn.bias.copy_(0.1 * torch.randn(bn.num_features))


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Identity()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))
        for m in self.modules():
            if isinstance(m, nn.BatchNorm2d):
                _randomize_bn(m)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class Model(nn.Module):
    def __init__(self, num_classes: int):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU())
        _randomize_bn(self.stem[1])
        blocks = []
        cin = 32
        for cout, stride in ((32, 1), (64, 2), (128, 2)):
            blocks += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
            cin = cout
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(cin, num_classes)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.fc(x.mean(dim=(2, 3)))


def get_inputs():
    return [torch.randn(batch_size, 3, image_size, image_size)]


def get_init_inputs():
    return [num_classes]

"""VGG-style stack of 3x3 conv blocks followed by a two-layer classifier."""

import torch
import torch.nn as nn

batch_size = 32
image_size = 64
num_classes = 10


class Model(nn.Module):
    def __init__(self, image_size: int, num_classes: int):
        super().__init__()
        layers = []
        cin = 3
        for cout in (64, 128, 256):
            layers += [nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU(),
                       nn.Conv2d(cout, cout, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2)]
            cin = cout
        self.features = nn.Sequential(*layers)
        side = image_size // 8
        self.classifier = nn.Sequential(nn.Linear(cin * side * side, 512), nn.ReLU(), nn.Linear(512, num_classes))

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


def get_inputs():
    return [torch.randn(batch_size, 3, image_size, image_size)]


def get_init_inputs():
    return [image_size, num_classes]

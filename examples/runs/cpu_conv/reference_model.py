"""A 3x3 convolution for the cpu optimization-run example: Conv2d(16, 32, 3) on a 1x16x26x26 input (24x24 output)."""

import torch


class Conv(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(16, 32, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def make():
    torch.manual_seed(0)
    return Conv(), (torch.randn(1, 16, 26, 26),)

"""A row softmax for the cpu optimization-run example: torch.softmax over the last dim of 128x512."""

import torch


class Softmax(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def make():
    torch.manual_seed(0)
    return Softmax(), (torch.randn(128, 512),)

"""A plain matmul for the cpu optimization-run example: x (128x192) times a weight (192x128)."""

import torch


class MatMul(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(192, 128) / 192**0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.mm(x, self.weight)


def make():
    torch.manual_seed(0)
    return MatMul(), (torch.randn(128, 192),)

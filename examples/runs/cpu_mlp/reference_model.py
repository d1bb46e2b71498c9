"""A small PyTorch model for the cpu optimization-run example: matmul, bias, activation."""

import torch


class MLP(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(128, 128)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x))


def make():
    torch.manual_seed(0)
    return MLP(), (torch.randn(64, 128),)

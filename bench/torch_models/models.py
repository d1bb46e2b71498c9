"""A dozen common PyTorch modules, small, as import-torch factories."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GeluMlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(16, 32), nn.Linear(32, 8)

    def forward(self, x):
        return self.b(F.gelu(self.a(x)))


class Mha(nn.Module):
    def __init__(self):
        super().__init__()
        self.mha = nn.MultiheadAttention(16, 2, batch_first=True)

    def forward(self, x):
        mask = torch.triu(torch.ones(6, 6, dtype=torch.bool), diagonal=1)
        return self.mha(x, x, x, attn_mask=mask, need_weights=False)[0]


class Sdpa(nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


class Lstm(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(8, 16, batch_first=True)

    def forward(self, x):
        return self.rnn(x)[0]


class Gru(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(8, 16, batch_first=True)

    def forward(self, x):
        return self.rnn(x)[0]


class ConvBn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv, self.bn = nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)))


class Misc(nn.Module):
    """tanh, exp, log, rsqrt, sigmoid, silu, softplus, erf."""
    def forward(self, x):
        return (torch.tanh(x) + torch.exp(x) * torch.log(x.abs() + 1) + torch.rsqrt(x * x + 1) + torch.sigmoid(x)
                + F.silu(x) + F.softplus(x) + torch.erf(x))


def gelu_mlp():
    return GeluMlp(), (torch.randn(4, 16),)

def mha():
    return Mha(), (torch.randn(2, 6, 16),)

def sdpa():
    return Sdpa(), tuple(torch.randn(1, 2, 6, 8) for _ in range(3))

def encoder():
    return nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True), (torch.randn(2, 6, 16),)

def layernorm():
    return nn.LayerNorm(16), (torch.randn(4, 16),)

def conv_bn():
    return ConvBn(), (torch.randn(1, 3, 10, 10),)

def lstm():
    return Lstm(), (torch.randn(2, 5, 8),)

def lstm_tuple():
    return nn.LSTM(8, 16, batch_first=True), (torch.randn(2, 5, 8),)

def gru():
    return Gru(), (torch.randn(2, 5, 8),)

def softmax():
    return nn.Softmax(dim=-1), (torch.randn(4, 32),)

def misc():
    return Misc(), (torch.randn(4, 32),)

def groupnorm():
    return nn.GroupNorm(2, 8), (torch.randn(2, 8, 4, 4),)

def embedding():
    return nn.Sequential(nn.Embedding(10, 8), nn.Linear(8, 4)), (torch.tensor([[1, 2, 3], [4, 5, 9]]),)

def maxpool():
    return nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.MaxPool2d(2), nn.Hardswish()), (torch.randn(1, 2, 8, 8),)

class Rfft(nn.Module):
    def forward(self, x):
        return torch.fft.rfft(x).abs()

def rfft():
    return Rfft(), (torch.randn(4, 16),)

"""Building blocks shared by the latency models, and the parameter / MAC counter.

MACs count what the chip computes in its matrix units: every multiply-accumulate
of Conv2d/Conv3d, ConvTranspose2d and Linear layers, at the model's published
input size. Element-wise layers, pooling and normalisation are not counted (as
thop and ptflops do by default, which is how the published figures were made).
"""
import torch
from torch import nn


def autopad(k, d=1):
    return d * (k - 1) // 2


class ConvBnAct(nn.Module):
    """Conv2d (no bias) + BatchNorm2d + activation: the unit of the YOLO families."""

    def __init__(self, c1, c2, k=1, s=1, p=None, g=1, d=1, act="silu", eps=1e-3):
        super().__init__()
        self.conv = nn.Conv2d(c1, c2, k, s, autopad(k, d) if p is None else p, dilation=d, groups=g, bias=False)
        self.bn = nn.BatchNorm2d(c2, eps=eps, momentum=0.03)
        self.act = activation(act)

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


def activation(name):
    return {"silu": nn.SiLU(), "relu": nn.ReLU(), "leaky": nn.LeakyReLU(0.1), "leaky0.1": nn.LeakyReLU(0.1),
            "mish": nn.Mish(), "none": nn.Identity()}[name]


def count_params(model):
    return sum(p.numel() for p in model.parameters())


def count_macs(model, example):
    """Multiply-accumulates of conv / deconv / linear layers for one forward pass of `example`."""
    macs = [0]

    def conv_hook(m, inp, out):
        k = 1
        for s in m.kernel_size:
            k *= s
        macs[0] += out.numel() * (m.in_channels // m.groups) * k

    def deconv_hook(m, inp, out):
        k = 1
        for s in m.kernel_size:
            k *= s
        macs[0] += inp[0].numel() * (m.out_channels // m.groups) * k

    def linear_hook(m, inp, out):
        macs[0] += out.numel() * m.in_features

    hooks = []
    for m in model.modules():
        if isinstance(m, (nn.Conv1d, nn.Conv2d, nn.Conv3d)):
            hooks.append(m.register_forward_hook(conv_hook))
        elif isinstance(m, (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)):
            hooks.append(m.register_forward_hook(deconv_hook))
        elif isinstance(m, nn.Linear):
            hooks.append(m.register_forward_hook(linear_hook))
    with torch.no_grad():
        model(example)
    for h in hooks:
        h.remove()
    return macs[0]

"""YOLOX-s (Megvii, depth 0.33, width 0.50, SiLU) at 640x640.

Written from the published architecture: a Focus stem (space-to-depth, then a 3x3
conv), CSPDarknet stages dark2-dark5 (CSP layers of 1x1/3x3 bottlenecks, SPP with 5/9/13
max pools in dark5), the PAFPN neck, and the decoupled head per level (1x1 stem, two 3x3
convs for classes and two for box/objectness). Conv = Conv2d + BN(eps 1e-3) + SiLU. The
graph ends at the raw head outputs per level: box (4), objectness (1) and class (80) maps
concatenated, before the sigmoid/decode and NMS of the post-processing.

Published: 9.0 M parameters and 26.8 GFLOPs at 640 (YOLOX README and paper, table 3;
GFLOPs = 2 x MACs as YOLOX's get_model_info computes them) -> 13.4 GMAC.
"""
import torch
from torch import nn

from blocks import ConvBnAct as Conv

PUBLISHED = {"params": 9.0e6, "macs": 13.4e9, "input": (1, 3, 640, 640),
             "source": "YOLOX README / paper table (YOLOX-s: 9.0M params, 26.8 GFLOPs at 640)"}


class Bottleneck(nn.Module):
    def __init__(self, c1, c2, shortcut=True):
        super().__init__()
        self.conv1 = Conv(c1, c2, 1)
        self.conv2 = Conv(c2, c2, 3)
        self.add = shortcut and c1 == c2

    def forward(self, x):
        y = self.conv2(self.conv1(x))
        return x + y if self.add else y


class CSPLayer(nn.Module):
    def __init__(self, c1, c2, n=1, shortcut=True):
        super().__init__()
        h = c2 // 2
        self.conv1 = Conv(c1, h, 1)
        self.conv2 = Conv(c1, h, 1)
        self.conv3 = Conv(2 * h, c2, 1)
        self.m = nn.Sequential(*(Bottleneck(h, h, shortcut) for _ in range(n)))

    def forward(self, x):
        return self.conv3(torch.cat((self.m(self.conv1(x)), self.conv2(x)), 1))


class SPPBottleneck(nn.Module):
    def __init__(self, c1, c2, ks=(5, 9, 13)):
        super().__init__()
        h = c1 // 2
        self.conv1 = Conv(c1, h, 1)
        self.pools = nn.ModuleList(nn.MaxPool2d(k, 1, k // 2) for k in ks)
        self.conv2 = Conv(h * (len(ks) + 1), c2, 1)

    def forward(self, x):
        x = self.conv1(x)
        return self.conv2(torch.cat([x] + [p(x) for p in self.pools], 1))


class Focus(nn.Module):
    def __init__(self, c1, c2, k=3):
        super().__init__()
        self.conv = Conv(c1 * 4, c2, k)

    def forward(self, x):
        return self.conv(torch.cat((x[..., ::2, ::2], x[..., 1::2, ::2], x[..., ::2, 1::2], x[..., 1::2, 1::2]), 1))


class YOLOX(nn.Module):
    def __init__(self, depth=0.33, width=0.50, nc=80):
        super().__init__()
        c = lambda k: int(k * width)  # noqa: E731
        d = max(round(3 * depth), 1)
        self.stem = Focus(3, c(64))
        self.dark2 = nn.Sequential(Conv(c(64), c(128), 3, 2), CSPLayer(c(128), c(128), d))
        self.dark3 = nn.Sequential(Conv(c(128), c(256), 3, 2), CSPLayer(c(256), c(256), 3 * d))
        self.dark4 = nn.Sequential(Conv(c(256), c(512), 3, 2), CSPLayer(c(512), c(512), 3 * d))
        self.dark5 = nn.Sequential(Conv(c(512), c(1024), 3, 2), SPPBottleneck(c(1024), c(1024)),
                                   CSPLayer(c(1024), c(1024), d, shortcut=False))
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.lateral_conv0 = Conv(c(1024), c(512), 1)
        self.c3_p4 = CSPLayer(c(1024), c(512), d, False)
        self.reduce_conv1 = Conv(c(512), c(256), 1)
        self.c3_p3 = CSPLayer(c(512), c(256), d, False)
        self.bu_conv2 = Conv(c(256), c(256), 3, 2)
        self.c3_n3 = CSPLayer(c(512), c(512), d, False)
        self.bu_conv1 = Conv(c(512), c(512), 3, 2)
        self.c3_n4 = CSPLayer(c(1024), c(1024), d, False)
        hc = c(256)
        self.stems = nn.ModuleList(Conv(c(k), hc, 1) for k in (256, 512, 1024))
        self.cls_convs = nn.ModuleList(nn.Sequential(Conv(hc, hc, 3), Conv(hc, hc, 3)) for _ in range(3))
        self.reg_convs = nn.ModuleList(nn.Sequential(Conv(hc, hc, 3), Conv(hc, hc, 3)) for _ in range(3))
        self.cls_preds = nn.ModuleList(nn.Conv2d(hc, nc, 1) for _ in range(3))
        self.reg_preds = nn.ModuleList(nn.Conv2d(hc, 4, 1) for _ in range(3))
        self.obj_preds = nn.ModuleList(nn.Conv2d(hc, 1, 1) for _ in range(3))

    def forward(self, x):
        x2 = self.dark3(self.dark2(self.stem(x)))
        x1 = self.dark4(x2)
        x0 = self.dark5(x1)
        fpn_out0 = self.lateral_conv0(x0)
        f_out0 = self.c3_p4(torch.cat((self.up(fpn_out0), x1), 1))
        fpn_out1 = self.reduce_conv1(f_out0)
        pan_out2 = self.c3_p3(torch.cat((self.up(fpn_out1), x2), 1))
        pan_out1 = self.c3_n3(torch.cat((self.bu_conv2(pan_out2), fpn_out1), 1))
        pan_out0 = self.c3_n4(torch.cat((self.bu_conv1(pan_out1), fpn_out0), 1))
        outs = []
        for i, f in enumerate((pan_out2, pan_out1, pan_out0)):
            f = self.stems[i](f)
            reg = self.reg_convs[i](f)
            outs.append(torch.cat((self.reg_preds[i](reg), self.obj_preds[i](reg),
                                   self.cls_preds[i](self.cls_convs[i](f))), 1))
        return tuple(outs)


def build():
    return YOLOX()

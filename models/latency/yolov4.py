"""YOLOv4 (CSPDarknet53 backbone with Mish, SPP, PANet neck with LeakyReLU 0.1, YOLOv3 heads)
at 416x416, 80 classes, 3 anchors per level.

Written from the published darknet cfg (yolov4.cfg): five CSP down-sampling stages with
1, 2, 8, 8, 4 residual blocks; SPP with 5/9/13 max pools; the top-down and bottom-up
PANet paths; a 3x3 conv and a 1x1 conv to 255 channels per level. Conv = Conv2d + BN +
activation; the three 255-channel output convs have a bias and no activation. The graph
ends at the three raw head maps (52x52, 26x26, 13x13), before the YOLO decode and NMS.

Published: 64,363,101 parameters (darknet's yolov4.weights, 80 classes) and 59.6 BFLOPs
at 416 as darknet prints them (= 2 x MACs: 128.5 BFLOPs at 608, scaled by (416/608)^2)
-> 30.1 GMAC.
"""
import torch
from torch import nn

from blocks import ConvBnAct

PUBLISHED = {"params": 64_363_101, "macs": 30.1e9, "input": (1, 3, 416, 416),
             "source": "darknet yolov4.cfg/yolov4.weights (64.36M params, 128.5 BFLOPs at 608)"}


def Conv(c1, c2, k, s=1, act="mish"):
    return ConvBnAct(c1, c2, k, s, act=act, eps=1e-5)


class ResBlock(nn.Module):
    def __init__(self, c, hidden):
        super().__init__()
        self.body = nn.Sequential(Conv(c, hidden, 1), Conv(hidden, c, 3))

    def forward(self, x):
        return x + self.body(x)


class CspStage(nn.Module):
    """Down-sample by 2, split into a shortcut part and a part with `blocks` residual blocks."""

    def __init__(self, c1, c2, blocks):
        super().__init__()
        first = blocks == 1  # the first stage keeps full width in its split and blocks
        h = c2 if first else c2 // 2
        self.down = Conv(c1, c2, 3, 2)
        self.split_short = Conv(c2, h, 1)
        self.split_main = Conv(c2, h, 1)
        self.blocks = nn.Sequential(*(ResBlock(h, h // 2 if first else h) for _ in range(blocks)))
        self.post = Conv(h, h, 1)
        self.merge = Conv(2 * h, c2, 1)

    def forward(self, x):
        x = self.down(x)
        return self.merge(torch.cat((self.post(self.blocks(self.split_main(x))), self.split_short(x)), 1))


def leaky(c1, c2, k, s=1):
    return Conv(c1, c2, k, s, act="leaky")


def five(c1, c):
    """The 1x1 / 3x3 / 1x1 / 3x3 / 1x1 conv set of the neck."""
    return nn.Sequential(leaky(c1, c, 1), leaky(c, 2 * c, 3), leaky(2 * c, c, 1), leaky(c, 2 * c, 3), leaky(2 * c, c, 1))


class YOLOv4(nn.Module):
    def __init__(self, nc=80, anchors=3):
        super().__init__()
        out = anchors * (nc + 5)
        self.stem = Conv(3, 32, 3)
        self.s1 = CspStage(32, 64, 1)
        self.s2 = CspStage(64, 128, 2)
        self.s3 = CspStage(128, 256, 8)
        self.s4 = CspStage(256, 512, 8)
        self.s5 = CspStage(512, 1024, 4)
        self.pre_spp = nn.Sequential(leaky(1024, 512, 1), leaky(512, 1024, 3), leaky(1024, 512, 1))
        self.spp = nn.ModuleList(nn.MaxPool2d(k, 1, k // 2) for k in (5, 9, 13))
        self.post_spp = nn.Sequential(leaky(2048, 512, 1), leaky(512, 1024, 3), leaky(1024, 512, 1))
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.reduce5 = leaky(512, 256, 1)
        self.lateral4 = leaky(512, 256, 1)
        self.td4 = five(512, 256)
        self.reduce4 = leaky(256, 128, 1)
        self.lateral3 = leaky(256, 128, 1)
        self.td3 = five(256, 128)
        self.head3 = nn.Sequential(leaky(128, 256, 3), nn.Conv2d(256, out, 1))
        self.down3 = leaky(128, 256, 3, 2)
        self.bu4 = five(512, 256)
        self.head4 = nn.Sequential(leaky(256, 512, 3), nn.Conv2d(512, out, 1))
        self.down4 = leaky(256, 512, 3, 2)
        self.bu5 = five(1024, 512)
        self.head5 = nn.Sequential(leaky(512, 1024, 3), nn.Conv2d(1024, out, 1))

    def forward(self, x):
        c3 = self.s3(self.s2(self.s1(self.stem(x))))
        c4 = self.s4(c3)
        p5 = self.pre_spp(self.s5(c4))
        p5 = self.post_spp(torch.cat([p5] + [pool(p5) for pool in self.spp], 1))
        t4 = self.td4(torch.cat((self.lateral4(c4), self.up(self.reduce5(p5))), 1))
        t3 = self.td3(torch.cat((self.lateral3(c3), self.up(self.reduce4(t4))), 1))
        b4 = self.bu4(torch.cat((self.down3(t3), t4), 1))
        b5 = self.bu5(torch.cat((self.down4(b4), p5), 1))
        return self.head3(t3), self.head4(b4), self.head5(b5)


def build():
    return YOLOv4()

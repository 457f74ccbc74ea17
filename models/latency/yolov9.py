"""YOLOv9s (ultralytics yolov9s.yaml) at 640x640, as exported: RepConvs fused.

Written from ultralytics' YOLOv9 modules (GELAN): Conv = Conv2d + BN(eps 1e-3) + SiLU;
ELAN1(c1, c2, c3, c4): a 1x1 conv to c3 split in halves, two chained 3x3 convs of c4 on
the second half, the four parts concatenated into a 1x1 conv to c2; RepNCSPELAN4(c1, c2,
c3, c4, n): the same with each 3x3 preceded by a RepCSP(n) (a C3 whose n bottlenecks are
RepBottlenecks: RepConv 3x3 + Conv 3x3, residual); AConv: 2x2 stride-1 average pool then a
stride-2 3x3 conv; ADown (YOLOv9c): 2x2 average pool, one half through a stride-2 3x3
conv, the other through a stride-2 3x3 max pool and a 1x1 conv; SPPELAN: a 1x1 conv, three
chained 5x5 max pools, the four concatenated into a 1x1 conv. Head: the PAN neck of the
yaml and the YOLOv8 decoupled Detect head (yolov8.py). RepConv (3x3 + 1x1 branches in
training) is built fused, one 3x3 conv, as ultralytics' exporter fuses it before writing
the ONNX that the bmodels are compiled from. The graphs end at the raw head outputs per
level (box 64 + class 80, and for -seg the 32 mask coefficients, plus the prototypes).

Published: YOLOv9s 7.2 M parameters and 26.7 GFLOPs at 640 (ultralytics docs, YOLOv9
table, fused model; GFLOPs = 2 x MACs) -> 13.35 GMAC. The yaml's unfused summary is
7,318,368 parameters, 27.6 GFLOPs: this graph's 7,211,424 plus the RepConvs' 1x1 branches
(c x c weights and a BatchNorm of 2c per RepBottleneck, 106,944 in all) is exactly that.
YOLOv9c-seg: 27.9 M parameters, 159.4 GFLOPs -> 79.7 GMAC as thop counts them, 5.03 GMAC of
which thop adds for Proto's deconvolution (yolov8_seg.py): 74.67 GMAC compared. Its 27,711,648
parameters plus the 1x1 branches' 185,472 are 27,897,120, ultralytics' unfused summary.
"""
import torch
from torch import nn

from blocks import ConvBnAct as Conv
# A RepBottleneck with its RepConv fused (one 3x3 conv + BN + SiLU, then a 3x3 Conv, the residual)
# is YOLOv8's Bottleneck.
from yolov8 import Bottleneck as RepBottleneck
from yolov8 import Detect, PanDetector
from yolov8_seg import add_segment, thop_deconv_extra

PUBLISHED = {"params": 7.2e6, "macs": 13.35e9, "input": (1, 3, 640, 640),
             "source": "ultralytics docs (YOLOv9s: 7.2M params, 26.7 GFLOPs at 640, fused)"}
PUBLISHED_C_SEG = {"params": 27.9e6, "macs": 79.7e9 - thop_deconv_extra(80, 80, 256, 256), "input": (1, 3, 640, 640),
                   "source": "ultralytics docs (YOLOv9c-seg: 27.9M params, 159.4 GFLOPs at 640, fused)"}


class RepCSP(nn.Module):
    def __init__(self, c1, c2, n=1, e=0.5):
        super().__init__()
        c_ = int(c2 * e)
        self.cv1 = Conv(c1, c_, 1)
        self.cv2 = Conv(c1, c_, 1)
        self.cv3 = Conv(2 * c_, c2, 1)
        self.m = nn.Sequential(*(RepBottleneck(c_, c_) for _ in range(n)))

    def forward(self, x):
        return self.cv3(torch.cat((self.m(self.cv1(x)), self.cv2(x)), 1))


class RepNCSPELAN4(nn.Module):
    def __init__(self, c1, c2, c3, c4, n=1):
        super().__init__()
        self.c = c3 // 2
        self.cv1 = Conv(c1, c3, 1)
        self.cv2 = self.branch(c3 // 2, c4, n)
        self.cv3 = self.branch(c4, c4, n)
        self.cv4 = Conv(c3 + 2 * c4, c2, 1)

    @staticmethod
    def branch(c1, c4, n):
        return nn.Sequential(RepCSP(c1, c4, n), Conv(c4, c4, 3))

    def forward(self, x):
        y = list(self.cv1(x).chunk(2, 1))
        y.append(self.cv2(y[-1]))
        y.append(self.cv3(y[-1]))
        return self.cv4(torch.cat(y, 1))


class ELAN1(RepNCSPELAN4):
    """RepNCSPELAN4 with plain 3x3 convs in place of the RepCSP branches."""

    def __init__(self, c1, c2, c3, c4):
        super().__init__(c1, c2, c3, c4)
        self.cv2 = Conv(c3 // 2, c4, 3)
        self.cv3 = Conv(c4, c4, 3)


class AConv(nn.Module):
    def __init__(self, c1, c2):
        super().__init__()
        self.cv1 = Conv(c1, c2, 3, 2, 1)

    def forward(self, x):
        return self.cv1(nn.functional.avg_pool2d(x, 2, 1, 0, False, True))


class ADown(nn.Module):
    def __init__(self, c1, c2):
        super().__init__()
        self.c = c2 // 2
        self.cv1 = Conv(c1 // 2, self.c, 3, 2, 1)
        self.cv2 = Conv(c1 // 2, self.c, 1, 1, 0)

    def forward(self, x):
        x = nn.functional.avg_pool2d(x, 2, 1, 0, False, True)
        x1, x2 = x.chunk(2, 1)
        return torch.cat((self.cv1(x1), self.cv2(nn.functional.max_pool2d(x2, 3, 2, 1))), 1)


class SPPELAN(nn.Module):
    def __init__(self, c1, c2, c3, k=5):
        super().__init__()
        self.cv1 = Conv(c1, c3, 1)
        self.m = nn.MaxPool2d(k, 1, k // 2)
        self.cv5 = Conv(4 * c3, c2, 1)

    def forward(self, x):
        y = [self.cv1(x)]
        for _ in range(3):
            y.append(self.m(y[-1]))
        return self.cv5(torch.cat(y, 1))


class YOLOv9(PanDetector):
    """The GELAN backbone and PAN neck of ultralytics' yolov9{s,c}.yaml; `down` is AConv (s) or ADown (c)."""

    def __init__(self, stem, elan1, stages, spp, neck, down, nc=80):
        super().__init__()
        (s1, s2), (c3, c4, c5) = stem, (stages[0][1], stages[1][1], stages[2][1])
        self.stem = nn.Sequential(Conv(3, s1, 3, 2), Conv(s1, s2, 3, 2), elan1)
        c2 = elan1.cv4.conv.out_channels
        self.p3 = nn.Sequential(down(c2, stages[0][0]), RepNCSPELAN4(stages[0][0], *stages[0][1:]))
        self.p4 = nn.Sequential(down(c3, stages[1][0]), RepNCSPELAN4(stages[1][0], *stages[1][1:]))
        self.p5 = nn.Sequential(down(c4, stages[2][0]), RepNCSPELAN4(stages[2][0], *stages[2][1:]), SPPELAN(c5, *spp))
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        t4, t3, d3, b4, d4, b5 = neck
        self.top_down4 = RepNCSPELAN4(spp[0] + c4, *t4)
        self.top_down3 = RepNCSPELAN4(t4[0] + c3, *t3)
        self.down3 = down(t3[0], d3)
        self.bottom_up4 = RepNCSPELAN4(d3 + t4[0], *b4)
        self.down4 = down(b4[0], d4)
        self.bottom_up5 = RepNCSPELAN4(d4 + spp[0], *b5)
        self.detect = Detect(nc, (t3[0], b4[0], b5[0]))


def yolov9s():
    # yolov9s.yaml: Conv 32, Conv 64, ELAN1 [64, 64, 32], AConv 128 / RepNCSPELAN4 [128, 128, 64, 3],
    # AConv 192 / [192, 192, 96, 3], AConv 256 / [256, 256, 128, 3], SPPELAN [256, 128];
    # neck [192, 192, 96, 3], [128, 128, 64, 3], AConv 96, [192, 192, 96, 3], AConv 128, [256, 256, 128, 3].
    return YOLOv9((32, 64), ELAN1(64, 64, 64, 32),
                  ((128, 128, 128, 64, 3), (192, 192, 192, 96, 3), (256, 256, 256, 128, 3)), (256, 128),
                  ((192, 192, 96, 3), (128, 128, 64, 3), 96, (192, 192, 96, 3), 128, (256, 256, 128, 3)), AConv)


def yolov9c_seg():
    # yolov9c-seg.yaml: Conv 64, Conv 128, RepNCSPELAN4 [256, 128, 64, 1], ADown 256 / [512, 256, 128, 1],
    # ADown 512 / [512, 512, 256, 1], ADown 512 / [512, 512, 256, 1], SPPELAN [512, 256];
    # neck [512, 512, 256, 1], [256, 256, 128, 1], ADown 256, [512, 512, 256, 1], ADown 512, [512, 512, 256, 1];
    # Segment [nc, 32, 256] (width 1).
    m = YOLOv9((64, 128), RepNCSPELAN4(128, 256, 128, 64, 1),
               ((256, 512, 256, 128, 1), (512, 512, 512, 256, 1), (512, 512, 512, 256, 1)), (512, 256),
               ((512, 512, 256, 1), (256, 256, 128, 1), 256, (512, 512, 256, 1), 512, (512, 512, 256, 1)), ADown)
    return add_segment(m, (256, 512, 512), 1.0)


def build():
    return yolov9s()

"""YOLOv8s detection (ultralytics 8.0, yolov8.yaml at scale s: depth 0.33, width 0.50, max 1024 channels).

Written from the published architecture: Conv = Conv2d + BN + SiLU; C2f(c1, c2, n) splits
a 1x1 conv's output in two halves, runs n bottlenecks on the second half and concatenates
every intermediate; SPPF chains three 5x5 max pools; the decoupled Detect head has a box
branch (64 channels = 4 x reg_max 16) and a class branch (80 classes) per level P3-P5.
The graph ends at the raw head outputs (box and class maps concatenated per level, no DFL
decode, no NMS), where sophon-demo's bmodels are cut.

Published: 11.2 M parameters (ultralytics reports 11,166,560 with the 16-weight DFL conv,
which is not part of this raw-output graph) and 28.6 GFLOPs at 640 (= 2 x MACs, thop) ->
14.3 GMAC.
"""
import torch
from torch import nn

from blocks import ConvBnAct as Conv

PUBLISHED = {"params": 11_166_560, "macs": 14.3e9, "input": (1, 3, 640, 640),
             "source": "ultralytics README (YOLOv8s: 11.2M params, 28.6 GFLOPs at 640; model summary 11,166,560)"}


class Bottleneck(nn.Module):
    def __init__(self, c1, c2, shortcut=True):
        super().__init__()
        self.cv1 = Conv(c1, c2, 3)
        self.cv2 = Conv(c2, c2, 3)
        self.add = shortcut and c1 == c2

    def forward(self, x):
        y = self.cv2(self.cv1(x))
        return x + y if self.add else y


class C2f(nn.Module):
    def __init__(self, c1, c2, n=1, shortcut=False):
        super().__init__()
        self.c = c2 // 2
        self.cv1 = Conv(c1, 2 * self.c, 1)
        self.cv2 = Conv((2 + n) * self.c, c2, 1)
        self.m = nn.ModuleList(Bottleneck(self.c, self.c, shortcut) for _ in range(n))

    def forward(self, x):
        y = list(self.cv1(x).chunk(2, 1))
        for m in self.m:
            y.append(m(y[-1]))
        return self.cv2(torch.cat(y, 1))


class SPPF(nn.Module):
    def __init__(self, c1, c2, k=5):
        super().__init__()
        c_ = c1 // 2
        self.cv1 = Conv(c1, c_, 1)
        self.cv2 = Conv(c_ * 4, c2, 1)
        self.m = nn.MaxPool2d(k, 1, k // 2)

    def forward(self, x):
        x = self.cv1(x)
        y1 = self.m(x)
        y2 = self.m(y1)
        return self.cv2(torch.cat((x, y1, y2, self.m(y2)), 1))


class Detect(nn.Module):
    def __init__(self, nc, ch, reg_max=16):
        super().__init__()
        c2 = max(16, ch[0] // 4, reg_max * 4)
        c3 = max(ch[0], min(nc, 100))
        self.box = nn.ModuleList(nn.Sequential(Conv(x, c2, 3), Conv(c2, c2, 3), nn.Conv2d(c2, 4 * reg_max, 1))
                                 for x in ch)
        self.cls = nn.ModuleList(nn.Sequential(Conv(x, c3, 3), Conv(c3, c3, 3), nn.Conv2d(c3, nc, 1)) for x in ch)
        # DFL: a fixed 16 -> 1 projection applied after the cut; kept for the parameter count.
        self.dfl = nn.Conv2d(reg_max, 1, 1, bias=False).requires_grad_(False)

    def forward(self, xs):
        return [torch.cat((b(x), c(x)), 1) for x, b, c in zip(xs, self.box, self.cls)]


class PanDetector(nn.Module):
    """A backbone to P3/P4/P5, the PAN neck (top-down, then bottom-up) and a head on the three outputs: the
    dataflow YOLOv8 and YOLOv9 share. Subclasses build stem, p3, p4, p5, up, top_down4, top_down3, down3,
    bottom_up4, down4, bottom_up5 and detect."""

    def forward(self, x):
        p3 = self.p3(self.stem(x))
        p4 = self.p4(p3)
        p5 = self.p5(p4)
        t4 = self.top_down4(torch.cat((self.up(p5), p4), 1))
        t3 = self.top_down3(torch.cat((self.up(t4), p3), 1))
        b4 = self.bottom_up4(torch.cat((self.down3(t3), t4), 1))
        b5 = self.bottom_up5(torch.cat((self.down4(b4), p5), 1))
        return tuple(self.detect([t3, b4, b5]))


class YOLOv8(PanDetector):
    def __init__(self, depth=0.33, width=0.50, max_channels=1024, nc=80):
        super().__init__()
        ch = lambda c: int(min(c, max_channels) * width)  # noqa: E731
        n = lambda k: max(round(k * depth), 1)  # noqa: E731
        self.stem = nn.Sequential(Conv(3, ch(64), 3, 2), Conv(ch(64), ch(128), 3, 2), C2f(ch(128), ch(128), n(3), True))
        self.p3 = nn.Sequential(Conv(ch(128), ch(256), 3, 2), C2f(ch(256), ch(256), n(6), True))
        self.p4 = nn.Sequential(Conv(ch(256), ch(512), 3, 2), C2f(ch(512), ch(512), n(6), True))
        self.p5 = nn.Sequential(Conv(ch(512), ch(1024), 3, 2), C2f(ch(1024), ch(1024), n(3), True),
                                SPPF(ch(1024), ch(1024)))
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.top_down4 = C2f(ch(1024) + ch(512), ch(512), n(3))
        self.top_down3 = C2f(ch(512) + ch(256), ch(256), n(3))
        self.down3 = Conv(ch(256), ch(256), 3, 2)
        self.bottom_up4 = C2f(ch(256) + ch(512), ch(512), n(3))
        self.down4 = Conv(ch(512), ch(512), 3, 2)
        self.bottom_up5 = C2f(ch(512) + ch(1024), ch(1024), n(3))
        self.detect = Detect(nc, (ch(256), ch(512), ch(1024)))


def build():
    return YOLOv8()

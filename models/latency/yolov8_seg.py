"""YOLOv8s-seg (ultralytics 8.0, yolov8-seg.yaml at scale s) at 640x640.

The YOLOv8s detection body of yolov8.py (backbone, PAN neck, decoupled Detect head) with
the ultralytics Segment head on top: a mask prototype branch, Proto(c1=P3's 128 channels,
c_=256 x width 0.50 = 128, 32 masks) = 3x3 Conv, 2x2 stride-2 ConvTranspose2d (bias),
3x3 Conv, 1x1 Conv to 32 prototypes at 160x160; and per level P3-P5 a mask-coefficient
branch cv4 = two 3x3 Convs of c4 = max(P3 channels // 4, 32) = 32 channels and a 1x1
conv to 32 coefficients. The graph ends at the raw head outputs: per level the box (64),
class (80) and mask-coefficient (32) maps concatenated, and the 1x32x160x160 prototypes
(no DFL decode, no NMS, no mask assembly).

Published: 11.8 M parameters and 42.6 GFLOPs at 640 (ultralytics README, YOLOv8s-seg;
GFLOPs = 2 x MACs, thop) -> 21.3 GMAC as thop counts them. thop prices a ConvTranspose2d
like a conv on its output (output elements x in_channels x kernel): 4 x the 0.42 GMAC the
2x2 stride-2 upsampling of Proto does (80x80 inputs x 128 x 128 x 4), 1.26 GMAC too many.
The check compares 21.3 - 1.26 = 20.04 GMAC with blocks.count_macs (which counts a
deconvolution on its input). The 11,821,056 parameters here are the detection body's
11,166,560 (yolov8.py, exactly ultralytics' YOLOv8s summary) plus 654,496 of the Segment head.
sophon-demo's YOLOv8_seg sample (BM1684, reference §10): FP32 38.5, INT8 b1 26.4, INT8 b4 16.3 ms.
"""
import torch
from torch import nn

from blocks import ConvBnAct as Conv
from yolov8 import YOLOv8


def thop_deconv_extra(h, w, c1, c2, k=2, s=2):
    """MACs that thop counts in excess for a ConvTranspose2d of an h x w input (it uses the output's elements)."""
    return (h * s) * (w * s) * c2 * c1 * k * k - h * w * c2 * c1 * k * k


PUBLISHED = {"params": 11.8e6, "macs": 21.3e9 - thop_deconv_extra(80, 80, 128, 128), "input": (1, 3, 640, 640),
             "source": "ultralytics README (YOLOv8s-seg: 11.8M params, 42.6 GFLOPs at 640)"}



class Proto(nn.Module):
    """ultralytics Proto: the mask prototypes from the P3 features, upsampled once (x2)."""

    def __init__(self, c1, c_=256, c2=32):
        super().__init__()
        self.cv1 = Conv(c1, c_, 3)
        self.upsample = nn.ConvTranspose2d(c_, c_, 2, 2, 0, bias=True)
        self.cv2 = Conv(c_, c_, 3)
        self.cv3 = Conv(c_, c2)

    def forward(self, x):
        return self.cv3(self.cv2(self.upsample(self.cv1(x))))


class Segment(nn.Module):
    """ultralytics Segment = Detect (the detector's own head, passed in) + Proto + per-level mask coefficients."""

    def __init__(self, detect, ch, nm=32, npr=256):
        super().__init__()
        self.detect = detect
        self.proto = Proto(ch[0], npr, nm)
        c4 = max(ch[0] // 4, nm)
        self.cv4 = nn.ModuleList(nn.Sequential(Conv(x, c4, 3), Conv(c4, c4, 3), nn.Conv2d(c4, nm, 1)) for x in ch)

    def forward(self, xs):
        p = self.proto(xs[0])
        det = self.detect(xs)
        return tuple(torch.cat((d, m(x)), 1) for d, x, m in zip(det, xs, self.cv4)) + (p,)


def add_segment(body, ch, width, max_channels=1024, nm=32, npr=256):
    """Replaces a YOLO body's `detect` head (its `forward` calls self.detect on the three levels) by a Segment
    head around it; npr is scaled as ultralytics' parse_model does (make_divisible(min(npr, max) * width, 8))."""
    npr = int(-(-min(npr, max_channels) * width // 8) * 8)
    body.detect = Segment(body.detect, ch, nm, npr)
    return body


def build():
    width = 0.50
    ch = tuple(int(c * width) for c in (256, 512, 1024))
    return add_segment(YOLOv8(depth=0.33, width=width), ch, width)

"""RetinaFace with the MobileNet-0.25 backbone (the biubug6 PyTorch re-implementation that
sophon-demo compiles) at 640x640.

Written from the published architecture: MobileNetV1 x0.25 (stages 1-3: a 3x3 conv and
depthwise-separable blocks, LeakyReLU 0.1), an FPN with 64 channels (1x1 laterals, nearest
upsampling, additions, 3x3 merges), an SSH context module per level (3x3, 5x5 and 7x7
receptive fields from stacked 3x3 convs, concatenated, ReLU) and 1x1 class / box /
landmark heads with two anchors per position. The graph ends at the nine raw head maps,
before the permute/reshape, softmax and prior decode of the post-processing.

Published: 426,608 parameters ("model size 1.7M", float32) and about 1.0 GMAC at 640x640
(the FLOP figures given for this model vary with the input size; the parameter count is
the check).
"""
import torch
from torch import nn
import torch.nn.functional as F

PUBLISHED = {"params": 426_608, "macs": None, "input": (1, 3, 640, 640),
             "source": "biubug6/Pytorch_Retinaface README (mobilenet0.25: 1.7 MB of float32 weights = 426,608 params)"}


def conv_bn(c1, c2, stride=1, k=3, leaky=0.0, act=True):
    layers = [nn.Conv2d(c1, c2, k, stride, k // 2, bias=False), nn.BatchNorm2d(c2)]
    if act:
        layers.append(nn.LeakyReLU(leaky) if leaky else nn.ReLU())
    return nn.Sequential(*layers)


def conv_dw(c1, c2, stride, leaky=0.1):
    return nn.Sequential(nn.Conv2d(c1, c1, 3, stride, 1, groups=c1, bias=False), nn.BatchNorm2d(c1),
                         nn.LeakyReLU(leaky), nn.Conv2d(c1, c2, 1, 1, 0, bias=False), nn.BatchNorm2d(c2),
                         nn.LeakyReLU(leaky))


class SSH(nn.Module):
    def __init__(self, c1, c2, leaky=0.1):
        super().__init__()
        self.conv3 = conv_bn(c1, c2 // 2, act=False)
        self.conv5_1 = conv_bn(c1, c2 // 4, leaky=leaky)
        self.conv5_2 = conv_bn(c2 // 4, c2 // 4, act=False)
        self.conv7_2 = conv_bn(c2 // 4, c2 // 4, leaky=leaky)
        self.conv7_3 = conv_bn(c2 // 4, c2 // 4, act=False)

    def forward(self, x):
        c5_1 = self.conv5_1(x)
        c7 = self.conv7_3(self.conv7_2(c5_1))
        return F.relu(torch.cat((self.conv3(x), self.conv5_2(c5_1), c7), 1))


class RetinaFace(nn.Module):
    def __init__(self, anchors=2):
        super().__init__()
        self.stage1 = nn.Sequential(conv_bn(3, 8, 2, leaky=0.1), conv_dw(8, 16, 1), conv_dw(16, 32, 2),
                                    conv_dw(32, 32, 1), conv_dw(32, 64, 2), conv_dw(64, 64, 1))
        self.stage2 = nn.Sequential(conv_dw(64, 128, 2), *(conv_dw(128, 128, 1) for _ in range(5)))
        self.stage3 = nn.Sequential(conv_dw(128, 256, 2), conv_dw(256, 256, 1))
        self.laterals = nn.ModuleList(conv_bn(c, 64, k=1, leaky=0.1) for c in (64, 128, 256))
        self.merge1 = conv_bn(64, 64, leaky=0.1)
        self.merge2 = conv_bn(64, 64, leaky=0.1)
        self.ssh = nn.ModuleList(SSH(64, 64) for _ in range(3))
        self.cls = nn.ModuleList(nn.Conv2d(64, anchors * 2, 1) for _ in range(3))
        self.box = nn.ModuleList(nn.Conv2d(64, anchors * 4, 1) for _ in range(3))
        self.landmark = nn.ModuleList(nn.Conv2d(64, anchors * 10, 1) for _ in range(3))

    def forward(self, x):
        s1 = self.stage1(x)
        s2 = self.stage2(s1)
        s3 = self.stage3(s2)
        o1, o2, o3 = (lat(s) for lat, s in zip(self.laterals, (s1, s2, s3)))
        o2 = self.merge2(o2 + F.interpolate(o3, size=o2.shape[2:], mode="nearest"))
        o1 = self.merge1(o1 + F.interpolate(o2, size=o1.shape[2:], mode="nearest"))
        feats = [ssh(o) for ssh, o in zip(self.ssh, (o1, o2, o3))]
        return tuple(head[i](f) for head in (self.box, self.cls, self.landmark) for i, f in enumerate(feats))


def build():
    return RetinaFace()

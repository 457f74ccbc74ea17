"""UNet (PaddleSeg's, the cityscapes model of Sophgo's model-zoo, 19 classes) at 640x640.

The zoo's UNet row (reference §10: 396 GOPs at 640, FP32 330.8 ms, INT8 132.2 ms at b1 and
150.5 ms per batch of 4) is `vision/segmentation/unet` of sophgo/model-zoo: config.yaml
(`gops: 396.2`, shape [1,3,640,640]) compiles PaddleSeg's unet_cityscapes_1024x512_160k.
Written from PaddleSeg's paddleseg/models/unet.py (the classic Ronneberger UNet with padded
convs and BatchNorm): ConvBNReLU = 3x3 conv (bias, 'same' padding) + BN + ReLU; an encoder
of a double conv 3->64 and four 2x2 max-pool down-steps of two ConvBNReLUs each (64->128,
128->256, 256->512, 512->512, the bottom stays 512 wide); a decoder of four bilinear 2x
upsamplings (use_deconv=False, align_corners=False), each concatenated with the skip of
the same size and followed by two ConvBNReLUs (1024->256, 512->128, 256->64, 128->64); a
3x3 conv to the 19 classes. Of the classic variants this is the one whose work matches the
396.2 GOPs (2 x 197.6 GMAC here, within 0.3 %): milesial's Pytorch-UNet (1024-wide bottom,
transposed convs) has 301 GMAC at 640 and its bilinear form 250 GMAC. The zoo's graph ends
in an argmax over the class axis (output `argmax_0.tmp_0`); this one ends at the logits
(1x19x640x640), like the other raw-output graphs of the set.
"""
import torch
from torch import nn
from torch.nn import functional as F

PUBLISHED = {"params": None, "macs": 396.2e9 / 2, "input": (1, 3, 640, 640),
             "source": "sophgo model-zoo vision/segmentation/unet/config.yaml (gops 396.2 at 1x3x640x640)"}


def conv_bn_relu(c1, c2):
    return nn.Sequential(nn.Conv2d(c1, c2, 3, 1, 1), nn.BatchNorm2d(c2), nn.ReLU())


def double_conv(c1, c2):
    return nn.Sequential(conv_bn_relu(c1, c2), conv_bn_relu(c2, c2))


class UNet(nn.Module):
    def __init__(self, num_classes=19):
        super().__init__()
        self.inc = double_conv(3, 64)
        self.downs = nn.ModuleList(double_conv(a, b) for a, b in ((64, 128), (128, 256), (256, 512), (512, 512)))
        self.ups = nn.ModuleList(double_conv(2 * a, b) for a, b in ((512, 256), (256, 128), (128, 64), (64, 64)))
        self.cls = nn.Conv2d(64, num_classes, 3, 1, 1)

    def forward(self, x):
        x = self.inc(x)
        skips = []
        for down in self.downs:
            skips.append(x)
            x = down(F.max_pool2d(x, 2, 2))
        for up in self.ups:
            skip = skips.pop()
            x = F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)  # = the skip's size at 640
            x = up(torch.cat((x, skip), 1))
        return self.cls(x)


def build():
    return UNet()

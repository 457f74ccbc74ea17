"""YOLACT (dbolya/yolact, yolact_base_config: ResNet-101 FPN, 550x550).

Written from the published yolact.py / data/config.py (yolact_base_config): a ResNet-101
backbone (torchvision's Bottleneck layout, 3-4-23-3) whose C3-C5 (512, 1024, 2048
channels at 69, 35 and 18 pixels) feed an FPN of 256 channels: 1x1 lateral convs, the
coarser level upsampled bilinearly to the finer one's size (align_corners False) and
added, a 3x3 conv + ReLU on each of P3-P5, and two stride-2 3x3 convs (no ReLU) for P6
and P7. The protonet on P3: three 3x3 convs of 256 + ReLU, a bilinear x2 upsampling (+
ReLU, as make_net appends one after every layer), a 3x3 conv of 256 + ReLU, a 1x1 conv to
32 prototypes + ReLU (mask_proto_prototype_activation): 1x32x138x138. One prediction
module shared by the five levels: a 3x3 conv of 256 + ReLU (extra_head_net), then 3x3
convs to 3 priors x 4 box offsets, x 81 class scores and x 32 mask coefficients (tanh).
The semantic-segmentation conv is used in training only and is left out. The graph ends
at the raw head outputs: per level box, class and coefficient maps concatenated (before
the softmax over classes, the prior decode and the NMS of the post-processing), and the
prototypes.

Published: no parameter or MAC figure in the paper or the repository; export.py prints the
counts unchecked. sophon-demo's YOLACT sample (reference §10): FP32 114.60, INT8 b1 135.59,
INT8 b4 53.90 ms.
"""
import torch
import torchvision
from torch import nn
from torch.nn import functional as F

PUBLISHED = {"params": None, "macs": None, "input": (1, 3, 550, 550),
             "source": "dbolya/yolact yolact_base_config (no published parameter or MAC count)"}


class FPN(nn.Module):
    def __init__(self, in_channels=(512, 1024, 2048), c=256, num_downsample=2):
        super().__init__()
        self.lat_layers = nn.ModuleList(nn.Conv2d(x, c, 1) for x in in_channels)
        self.pred_layers = nn.ModuleList(nn.Conv2d(c, c, 3, padding=1) for _ in in_channels)
        self.downsample_layers = nn.ModuleList(nn.Conv2d(c, c, 3, padding=1, stride=2) for _ in range(num_downsample))

    def forward(self, convouts):
        out, x = [None] * len(convouts), None
        for j in reversed(range(len(convouts))):
            lat = self.lat_layers[j](convouts[j])
            if x is not None:
                x = F.interpolate(x, size=tuple(int(s) for s in lat.shape[-2:]), mode="bilinear", align_corners=False)
            x = lat if x is None else x + lat
            out[j] = x
        out = [F.relu(p(o)) for p, o in zip(self.pred_layers, out)]
        for down in self.downsample_layers:
            out.append(down(out[-1]))
        return out


class Interpolate(nn.Module):
    def forward(self, x):
        return F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)


class PredictionModule(nn.Module):
    def __init__(self, c=256, num_priors=3, num_classes=81, mask_dim=32):
        super().__init__()
        self.upfeature = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.ReLU())
        self.bbox_layer = nn.Conv2d(c, num_priors * 4, 3, padding=1)
        self.conf_layer = nn.Conv2d(c, num_priors * num_classes, 3, padding=1)
        self.mask_layer = nn.Conv2d(c, num_priors * mask_dim, 3, padding=1)

    def forward(self, x):
        x = self.upfeature(x)
        return torch.cat((self.bbox_layer(x), self.conf_layer(x), torch.tanh(self.mask_layer(x))), 1)


class Yolact(nn.Module):
    def __init__(self):
        super().__init__()
        r = torchvision.models.resnet101(weights=None)
        self.stem = nn.Sequential(r.conv1, r.bn1, r.relu, r.maxpool, r.layer1)
        self.layers = nn.ModuleList((r.layer2, r.layer3, r.layer4))
        self.fpn = FPN()
        proto = []
        for layer in [nn.Conv2d(256, 256, 3, padding=1) for _ in range(3)] + \
                [Interpolate(), nn.Conv2d(256, 256, 3, padding=1), nn.Conv2d(256, 32, 1)]:
            proto += [layer, nn.ReLU()]
        self.proto_net = nn.Sequential(*proto)
        self.prediction = PredictionModule()

    def forward(self, x):
        x = self.stem(x)
        convouts = []
        for layer in self.layers:
            x = layer(x)
            convouts.append(x)
        p = self.fpn(convouts)
        return tuple(self.prediction(level) for level in p) + (self.proto_net(p[0]),)


def build():
    return Yolact()

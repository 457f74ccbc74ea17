"""LPRNet (licence plates, the sirius-ai PyTorch re-implementation that sophon-demo compiles)
at 24x94, 68 classes (Chinese plate characters).

Written from the published architecture: a 3x3 conv stem, "small basic blocks" (1x1, 3x1,
1x3, 1x1 convs), 3-D max pools that also subsample channels (stride 2 and 4 over C), a
1x4 and a 13x1 conv, and the global-context head: four kept feature maps, average-pooled
to 4x18, each divided by the mean of its square, concatenated and mixed by a 1x1 conv,
then averaged over height. The graph ends at the [1, 68, 18] logits (before the CTC
greedy decode).

Published: LPRNet_Pytorch publishes its definition and a 1.7 MB float32 weight file
(Final_LPRNet_model.pth), i.e. about 0.45 M parameters; this definition has 446,976
(with BatchNorm statistics excluded), 0.144 GMAC at 24x94. No MAC figure is published.
"""
import torch
from torch import nn

PUBLISHED = {"params": 446_976, "macs": None, "input": (1, 3, 24, 94),
             "source": "sirius-ai/LPRNet_Pytorch model definition (Ge_Weights 1.7 MB)"}


class ChannelStridedMaxPool(nn.Module):
    """nn.MaxPool3d((1, kh, kw), (sc, sh, sw)) of the published definition on an (N, C, H, W) tensor: torch
    reads it as an unbatched (C', D, H, W) volume, so the pool runs over (C, H, W) with a window of one
    channel, i.e. it keeps every sc-th channel and max-pools each kept plane. Written as that channel slice
    and a 2-D max pool (the same function, exported as Slice + MaxPool instead of a 5-D MaxPool)."""

    def __init__(self, kernel, stride):
        super().__init__()
        self.channel_stride = stride[0]
        self.pool = nn.MaxPool2d(kernel[1:], stride[1:])

    def forward(self, x):
        return self.pool(x[:, ::self.channel_stride] if self.channel_stride > 1 else x)


def basic_block(c1, c2):
    q = c2 // 4
    return nn.Sequential(nn.Conv2d(c1, q, 1), nn.ReLU(), nn.Conv2d(q, q, (3, 1), padding=(1, 0)), nn.ReLU(),
                         nn.Conv2d(q, q, (1, 3), padding=(0, 1)), nn.ReLU(), nn.Conv2d(q, c2, 1))


class LPRNet(nn.Module):
    KEEP = (2, 6, 13, 22)

    def __init__(self, classes=68):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 64, 3), nn.BatchNorm2d(64), nn.ReLU(),
            ChannelStridedMaxPool((1, 3, 3), (1, 1, 1)),
            basic_block(64, 128), nn.BatchNorm2d(128), nn.ReLU(),
            ChannelStridedMaxPool((1, 3, 3), (2, 1, 2)),
            basic_block(64, 256), nn.BatchNorm2d(256), nn.ReLU(),
            basic_block(256, 256), nn.BatchNorm2d(256), nn.ReLU(),
            ChannelStridedMaxPool((1, 3, 3), (4, 1, 2)),
            nn.Dropout(0.5),
            nn.Conv2d(64, 256, (1, 4)), nn.BatchNorm2d(256), nn.ReLU(),
            nn.Dropout(0.5),
            nn.Conv2d(256, classes, (13, 1)), nn.BatchNorm2d(classes), nn.ReLU())
        self.pools = nn.ModuleList([nn.AvgPool2d(5, 5), nn.AvgPool2d(5, 5), nn.AvgPool2d((4, 10), (4, 2)),
                                    nn.Identity()])
        self.container = nn.Conv2d(448 + classes, classes, 1)

    def forward(self, x):
        kept = []
        for i, layer in enumerate(self.backbone):
            x = layer(x)
            if i in self.KEEP:
                kept.append(x)
        context = []
        for pool, f in zip(self.pools, kept):
            f = pool(f)
            # torch.pow(f, 2) and torch.mean(f_pow) in the published code: the mean over every axis (the
            # batch too), kept as a [1, 1, 1, 1] tensor instead of a 0-d one (the back end has no rank-0
            # tensors); the same division broadcast over f.
            context.append(f / torch.mean(f * f, dim=(0, 1, 2, 3), keepdim=True))
        return torch.mean(self.container(torch.cat(context, 1)), dim=2)


def build():
    return LPRNet()

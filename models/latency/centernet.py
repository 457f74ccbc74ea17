"""CenterNet object detection with the DLA-34 v0 backbone (xingyizhou/CenterNet
`ctdet_coco_dlav0`, no deformable convs) at 512x512, 80 classes, output stride 4.

Written from the published architecture: DLA-34 (a 7x7 stem, two conv levels, then
hierarchical trees of residual BasicBlocks with 1x1 aggregation roots, levels
[1, 1, 1, 2, 2, 1], channels [16, 32, 64, 128, 256, 512]); the DLA-up decoder of iterative
deep aggregation (1x1 projections, depthwise transposed convs that upsample by 2/4/8,
3x3 aggregation nodes) back to stride 4 with 64 channels; and three heads (3x3 conv to
256, ReLU, 1x1 conv): heat map (80), size (2) and offset (2). The graph ends at the three
raw head maps (128x128), before the max-pool peak extraction and decode.

Published: no parameter or MAC count is published for this variant. The definition
follows dlav0.py module for module (the DLA base's unused ImageNet classifier left out):
17,961,476 parameters, 31.1 GMAC at 512x512 (PUBLISHED pins these, so a change to the
architecture is caught).
"""
import torch
from torch import nn

PUBLISHED = {"params": 17_961_476, "macs": 31.12e9, "input": (1, 3, 512, 512),
             "source": "xingyizhou/CenterNet src/lib/models/networks/dlav0.py (dlav0_34, head_conv 256)"}


def conv_bn_relu(c1, c2, k=3, s=1):
    return nn.Sequential(nn.Conv2d(c1, c2, k, s, k // 2, bias=False), nn.BatchNorm2d(c2), nn.ReLU())


class BasicBlock(nn.Module):
    def __init__(self, c1, c2, stride=1):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(c1, c2, 3, stride, 1, bias=False), nn.BatchNorm2d(c2), nn.ReLU(),
                                  nn.Conv2d(c2, c2, 3, 1, 1, bias=False), nn.BatchNorm2d(c2))

    def forward(self, x, residual=None):
        return torch.relu(self.body(x) + (x if residual is None else residual))


class Root(nn.Module):
    def __init__(self, c1, c2):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(c1, c2, 1, bias=False), nn.BatchNorm2d(c2), nn.ReLU())

    def forward(self, *xs):
        return self.conv(torch.cat(xs, 1))


class Tree(nn.Module):
    def __init__(self, levels, c1, c2, stride=1, level_root=False, root_dim=0):
        super().__init__()
        root_dim = root_dim or 2 * c2
        if level_root:
            root_dim += c1
        if levels == 1:
            self.tree1 = BasicBlock(c1, c2, stride)
            self.tree2 = BasicBlock(c2, c2)
            self.root = Root(root_dim, c2)
        else:
            self.tree1 = Tree(levels - 1, c1, c2, stride)
            self.tree2 = Tree(levels - 1, c2, c2, root_dim=root_dim + c2)
        self.levels, self.level_root = levels, level_root
        self.downsample = nn.MaxPool2d(stride, stride) if stride > 1 else None
        self.project = nn.Sequential(nn.Conv2d(c1, c2, 1, bias=False), nn.BatchNorm2d(c2)) if c1 != c2 else None

    def forward(self, x, residual=None, children=None):
        children = [] if children is None else children
        bottom = self.downsample(x) if self.downsample else x
        residual = self.project(bottom) if self.project else bottom
        if self.level_root:
            children.append(bottom)
        x1 = self.tree1(x, residual)
        if self.levels == 1:
            return self.root(self.tree2(x1), x1, *children)
        children.append(x1)
        return self.tree2(x1, children=children)


class IdaUp(nn.Module):
    def __init__(self, out_dim, channels, factors):
        super().__init__()
        self.proj = nn.ModuleList(nn.Identity() if c == out_dim else conv_bn_relu(c, out_dim, 1) for c in channels)
        self.up = nn.ModuleList(nn.Identity() if f == 1 else
                                nn.ConvTranspose2d(out_dim, out_dim, f * 2, f, f // 2, groups=out_dim, bias=False)
                                for f in factors)
        self.node = nn.ModuleList(conv_bn_relu(2 * out_dim, out_dim) for _ in channels[1:])

    def forward(self, layers):
        layers = [up(proj(x)) for proj, up, x in zip(self.proj, self.up, layers)]
        x, ys = layers[0], []
        for node, l in zip(self.node, layers[1:]):
            x = node(torch.cat((x, l), 1))
            ys.append(x)
        return x, ys


class DlaUp(nn.Module):
    def __init__(self, channels):
        super().__init__()
        scales = [2 ** i for i in range(len(channels))]
        ins = list(channels)
        self.ida = nn.ModuleList()
        for i in range(len(channels) - 1):
            j = -i - 2
            self.ida.append(IdaUp(channels[j], ins[j:], [s // scales[j] for s in scales[j:]]))
            scales[j + 1:] = [scales[j]] * len(scales[j + 1:])
            ins[j + 1:] = [channels[j]] * len(ins[j + 1:])

    def forward(self, layers):
        layers = list(layers)
        for i, ida in enumerate(self.ida):
            x, ys = ida(layers[-i - 2:])
            layers[-i - 1:] = ys
        return x


class CenterNet(nn.Module):
    def __init__(self, heads=(("hm", 80), ("wh", 2), ("reg", 2)), head_conv=256):
        super().__init__()
        ch = [16, 32, 64, 128, 256, 512]
        self.base = nn.Sequential(nn.Conv2d(3, ch[0], 7, 1, 3, bias=False), nn.BatchNorm2d(ch[0]), nn.ReLU())
        self.level0 = conv_bn_relu(ch[0], ch[0])
        self.level1 = conv_bn_relu(ch[0], ch[1], s=2)
        self.level2 = Tree(1, ch[1], ch[2], 2)
        self.level3 = Tree(2, ch[2], ch[3], 2, level_root=True)
        self.level4 = Tree(2, ch[3], ch[4], 2, level_root=True)
        self.level5 = Tree(1, ch[4], ch[5], 2, level_root=True)
        self.dla_up = DlaUp(ch[2:])
        self.heads = nn.ModuleList(nn.Sequential(nn.Conv2d(ch[2], head_conv, 3, 1, 1), nn.ReLU(),
                                                 nn.Conv2d(head_conv, c, 1)) for _, c in heads)

    def forward(self, x):
        x = self.level1(self.level0(self.base(x)))
        levels = []
        for level in (self.level2, self.level3, self.level4, self.level5):
            x = level(x)
            levels.append(x)
        x = self.dla_up(levels)
        return tuple(h(x) for h in self.heads)


def build():
    return CenterNet()

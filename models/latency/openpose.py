"""OpenPose body model pose_coco (CMU, 18 keypoints + background, 19 PAF pairs) at 368x368.

Written from the published Caffe prototxt (pose/coco/pose_deploy_linevec.prototxt): the
first ten VGG-19 convs (conv1_1-conv4_2, three 2x2 max pools), conv4_3_CPM (256) and
conv4_4_CPM (128); stage 1 with two branches (three 3x3 convs of 128, a 1x1 of 512, a 1x1
to 38 part-affinity or 19 heat-map channels); stages 2-6 on the concatenation of both
branch outputs and the features (185 channels), five 7x7 convs of 128, a 1x1 of 128, a
1x1 to 38 / 19. ReLU after every conv but each branch's last. The graph ends at the
stage-6 heat maps and PAFs concatenated (1x57x46x46), as the Caffe model's net_output.

Published: 52,311,446 parameters (pose_iter_440000.caffemodel, 200 MB of float32).
"""
import torch
from torch import nn

PUBLISHED = {"params": 52_311_446, "macs": None, "input": (1, 3, 368, 368),
             "source": "CMU OpenPose pose_coco prototxt / pose_iter_440000.caffemodel (52.3M params)"}


def convs(spec, last_relu=False):
    layers = []
    for i, (c1, c2, k) in enumerate(spec):
        layers.append(nn.Conv2d(c1, c2, k, 1, k // 2))
        if i + 1 < len(spec) or last_relu:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class OpenPose(nn.Module):
    def __init__(self, pafs=38, heatmaps=19):
        super().__init__()
        pool = nn.MaxPool2d(2, 2)
        self.features = nn.Sequential(
            convs([(3, 64, 3), (64, 64, 3)], True), pool,
            convs([(64, 128, 3), (128, 128, 3)], True), pool,
            convs([(128, 256, 3), (256, 256, 3), (256, 256, 3), (256, 256, 3)], True), pool,
            convs([(256, 512, 3), (512, 512, 3), (512, 256, 3), (256, 128, 3)], True))
        first = lambda c: convs([(128, 128, 3)] * 3 + [(128, 512, 1), (512, c, 1)])  # noqa: E731
        later = lambda c: convs([(185, 128, 7)] + [(128, 128, 7)] * 4 + [(128, 128, 1), (128, c, 1)])  # noqa: E731
        self.paf = nn.ModuleList([first(pafs)] + [later(pafs) for _ in range(5)])
        self.heat = nn.ModuleList([first(heatmaps)] + [later(heatmaps) for _ in range(5)])

    def forward(self, x):
        f = self.features(x)
        x = f
        for paf, heat in zip(self.paf, self.heat):
            p, h = paf(x), heat(x)
            x = torch.cat((p, h, f), 1)
        return torch.cat((h, p), 1)


def build():
    return OpenPose()

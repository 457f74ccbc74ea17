"""C3D (Tran et al. 2015) as sophon-demo's C3D sample runs it: mmaction2's UCF101 C3D at 16x112x112.

Eight 3x3x3 convs with ReLU (64, 128, 256, 256, 512, 512, 512, 512), max pools (1,2,2) after
conv1, (2,2,2) after conv2, conv3b and conv4b, and (2,2,2) with padding (0,1,1) after conv5b,
so fc6 reads 512x1x4x4 = 8192 values; fc6 and fc7 of 4096 with ReLU, the 101-class head.
Published (mmaction2 model zoo, c3d_sports1m-pretrained ucf101): 78.4 M parameters, 38.5 G
FLOPs counted as multiply-accumulates.
"""
from torch import nn

PUBLISHED = {"params": 78.4e6, "macs": 38.5e9, "input": (1, 3, 16, 112, 112),
             "source": "mmaction2 C3D, UCF101 (78.4 M params, 38.5 GMAC at 16x112x112)"}


class C3D(nn.Module):
    def __init__(self, classes=101):
        super().__init__()
        widths = ((3, 64), (64, 128), (128, 256), (256, 256), (256, 512), (512, 512), (512, 512), (512, 512))
        self.convs = nn.ModuleList(nn.Conv3d(i, o, 3, padding=1) for i, o in widths)
        # The pool after each conv index (conv1, conv2, conv3b, conv4b, conv5b).
        self.pools = {0: nn.MaxPool3d((1, 2, 2), (1, 2, 2)), 1: nn.MaxPool3d(2, 2), 3: nn.MaxPool3d(2, 2),
                      5: nn.MaxPool3d(2, 2), 7: nn.MaxPool3d(2, 2, padding=(0, 1, 1))}
        self.fc6, self.fc7, self.fc8 = nn.Linear(8192, 4096), nn.Linear(4096, 4096), nn.Linear(4096, classes)
        self.relu = nn.ReLU()

    def forward(self, x):
        for i, conv in enumerate(self.convs):
            x = self.relu(conv(x))
            if i in self.pools:
                x = self.pools[i](x)
        x = x.flatten(1)
        return self.fc8(self.relu(self.fc7(self.relu(self.fc6(x)))))


def build():
    return C3D()

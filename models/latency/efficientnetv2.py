"""EfficientNetV2 of Sophgo's model-zoo (timm `efficientnetv2_rw_t`, "EfficientNetV2-T") at 288x288.

The zoo's EfficientNetV2 row (reference §10: FP32 10.39 ms, INT8 15.19 ms) is
`vision/classification/efficientnetv2` of sophgo/model-zoo: a 52 MB ONNX converted from
timm's efficientnetv2_t_agc weights (efficientnetv2_rw_t), shape [1,3,288,288], gops 5.9.
Caveat: that config.yaml passes `--target BM1684X` to its compilers, so whether the
published times are BM1684's is less certain than the reference's attribution says.

timm builds efficientnetv2_rw_t as _gen_efficientnetv2_s(channel_multiplier=0.8,
depth_multiplier=0.9): EfficientNetV2-S's stages (cn_r2_c24_skip, er_r4_s2_e4_c48,
er_r4_s2_e4_c64, ir_r6_s2_e4_c128_se, ir_r9_s1_e6_c160_se, ir_r15_s2_e6_c256_se, all
3x3) with channels rounded to multiples of 8 (24, 40, 48, 104, 128, 208; head 1024) and
repeats rounded up (2, 4, 4, 6, 9, 14); stem 24, SiLU, SE of a quarter of the block's input
channels. Written with torchvision's EfficientNet building blocks, which implement the same
blocks (FusedMBConv = timm's EdgeResidual, and the expand-ratio-1 ConvBnAct with skip;
MBConv with SE squeeze = input channels // 4), ending at the 1000 logits.

Published: 13.65 M parameters (timm; 13,649,388 here). MACs are not checked: this graph has
3.16 GMAC at 288 (timm's own profile, 1.93 GMAC at 224, scales to 3.19), while the zoo's
`gops: 5.9` would be 2.95 GMAC, 7 % fewer, by a convention of tpu-perf's that is not
published (the variant is the zoo README's, and its parameter count matches exactly).
"""
from functools import partial

from torch import nn
from torchvision.models.efficientnet import EfficientNet, FusedMBConvConfig, MBConvConfig

PUBLISHED = {"params": 13.65e6, "macs": None, "input": (1, 3, 288, 288),
             "source": "timm efficientnetv2_rw_t (13.65M params)"}


def build():
    setting = [
        FusedMBConvConfig(1, 3, 1, 24, 24, 2),
        FusedMBConvConfig(4, 3, 2, 24, 40, 4),
        FusedMBConvConfig(4, 3, 2, 40, 48, 4),
        MBConvConfig(4, 3, 2, 48, 104, 6),
        MBConvConfig(6, 3, 1, 104, 128, 9),
        MBConvConfig(6, 3, 2, 128, 208, 14),
    ]
    return EfficientNet(setting, dropout=0.2, last_channel=1024, norm_layer=partial(nn.BatchNorm2d, eps=1e-3))

#!/usr/bin/python3
"""Writes one model of the golden timing tests (tests/golden) as ONNX, with seeded
weights and seeded inputs, so that `tpuc import` + `tpuc deploy` give the same
bmodel on every run.

    /usr/bin/python3 tests/golden/make_model.py MODEL OUT_DIR

MODEL:
  cnn_grouped          a small VGG-like CNN, 1x3x64x64: four conv3x3+ReLU (two
                       before, two after a 2x2 max pool), global average pool, FC.
                       Chains of conv+ReLU at these sizes fit local memory
                       together, so the compiler groups them (the test checks it).
  resnet50_bottleneck  torchvision's ResNet-50 Bottleneck block of conv2_x
                       (256 -> 64 -> 64 -> 256 channels, identity shortcut) at
                       1x256x56x56, BatchNorm statistics seeded.

Writes OUT_DIR/MODEL.onnx (input "input", output "output"), OUT_DIR/MODEL_in.npz
and, for calibration, OUT_DIR/MODEL_cali_0.npz and _cali_1.npz.
Timing depends only on the shapes, but the INT8 shifts depend on the data: the
inputs are seeded too.
"""
import os
import sys

import numpy as np
import torch
import torchvision

OPSET = 13


class CnnGrouped(torch.nn.Module):
    def __init__(self):
        super().__init__()
        relu = torch.nn.ReLU
        conv = torch.nn.Conv2d
        self.features = torch.nn.Sequential(
            conv(3, 16, 3, padding=1), relu(), conv(16, 16, 3, padding=1), relu(),
            torch.nn.MaxPool2d(2),
            conv(16, 32, 3, padding=1), relu(), conv(32, 32, 3, padding=1), relu(),
            torch.nn.AdaptiveAvgPool2d(1))
        self.fc = torch.nn.Linear(32, 10)

    def forward(self, x):
        return self.fc(torch.flatten(self.features(x), 1))


def bottleneck():
    block = torchvision.models.resnet.Bottleneck(256, 64)
    for bn in (m for m in block.modules() if isinstance(m, torch.nn.BatchNorm2d)):
        # Seeded statistics near what a trained block has (not the identity defaults).
        bn.running_mean.uniform_(-0.1, 0.1)
        bn.running_var.uniform_(0.5, 1.5)
        bn.weight.data.uniform_(0.5, 1.0)
        bn.bias.data.uniform_(-0.1, 0.1)
    return block


MODELS = {  # name -> (constructor, input shape, seed)
    "cnn_grouped": (CnnGrouped, (1, 3, 64, 64), 64),
    "resnet50_bottleneck": (bottleneck, (1, 256, 56, 56), 50),
}


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in MODELS:
        sys.exit(f"usage: make_model.py {{{'|'.join(MODELS)}}} OUT_DIR")
    name, out = sys.argv[1:3]
    make, shape, seed = MODELS[name]
    torch.manual_seed(seed)
    model = make().eval()
    os.makedirs(out, exist_ok=True)
    torch.onnx.export(model, torch.zeros(shape), os.path.join(out, name + ".onnx"), opset_version=OPSET,
                      input_names=["input"], output_names=["output"])
    rng = np.random.default_rng(seed)
    for suffix in ("in", "cali_0", "cali_1"):
        x = rng.uniform(-1, 1, shape).astype(np.float32)
        np.savez(os.path.join(out, f"{name}_{suffix}.npz"), input=x)


if __name__ == "__main__":
    main()

# Writes a small ONNX model for the INT8 levers into the directory argv[1]
# (fixed seed): conv 3->8 + relu, depthwise 3x3 + relu, 1x1 conv 8->16 +
# relu, 1x1 conv 16->4 (sigmoid output). The filters' channels have ranges
# three decades apart (as depthwise filters of trained nets do), so
# per-tensor int8 weight scales lose most of the small channels unless
# equalized. Also 8 calibration PNGs (images/) and a test input (in.npz,
# the preprocessed image t.png).
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper
from PIL import Image
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from onnx_writer import save_model  # noqa: E402

out = sys.argv[1]
rng = np.random.default_rng(16)


def filt(name, shape, spread):
    w = rng.normal(0, 0.3, shape) * 10.0 ** rng.uniform(-spread, spread, (shape[0], 1, 1, 1))
    return numpy_helper.from_array(w.astype(np.float32), name)


def bias(name, n):
    return numpy_helper.from_array(rng.normal(0, 0.1, (n,)).astype(np.float32), name)


inits = [filt("w1", (8, 3, 3, 3), 1.5), bias("b1", 8), filt("w2", (8, 1, 3, 3), 1.5), bias("b2", 8),
         filt("w3", (16, 8, 1, 1), 0.5), bias("b3", 16), filt("w4", (4, 16, 1, 1), 0.3), bias("b4", 4)]
nodes = [
    helper.make_node("Conv", ["input", "w1", "b1"], ["conv1"], pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["conv1"], ["relu1"]),
    helper.make_node("Conv", ["relu1", "w2", "b2"], ["dw"], pads=[1, 1, 1, 1], group=8),
    helper.make_node("Relu", ["dw"], ["relu2"]),
    helper.make_node("Conv", ["relu2", "w3", "b3"], ["pw"]),
    helper.make_node("Relu", ["pw"], ["relu3"]),
    helper.make_node("Conv", ["relu3", "w4", "b4"], ["head"]),
    helper.make_node("Sigmoid", ["head"], ["output"]),
]
graph = helper.make_graph(nodes, "levers",
                          [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 16, 16])],
                          [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 4, 16, 16])], inits)
save_model(graph, os.path.join(out, "levers.onnx"), ir_version=8, check=True)
os.makedirs(os.path.join(out, "images"), exist_ok=True)


def image(seed):
    r = np.random.default_rng(seed)
    base = r.integers(0, 256, (4, 4, 3)).astype(np.float64)
    smooth = np.kron(base, np.ones((4, 4, 1))) + r.normal(0, 20, (16, 16, 3))
    return Image.fromarray(np.clip(smooth, 0, 255).astype(np.uint8), "RGB")


for i in range(8):
    image(i).save(os.path.join(out, "images", f"p{i}.png"))
image(100).save(os.path.join(out, "t.png"))

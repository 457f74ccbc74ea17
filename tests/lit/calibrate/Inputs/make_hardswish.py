# Writes into argv[1] a PP-LCNet-like ONNX model (fixed seed): conv 3->8,
# a learnable scale and shift (x * s + b, scalars), hard_swish, scale and
# shift; depthwise 3x3 the same; 1x1 conv 8->4 (the output). Most
# pre-activations of the hard_swishes lie in [-3, 3], where the function
# bends, but one channel reaches 24 (a large bias): their int8 step is
# then about 0.2. Also 8 calibration samples (samples/) and a test input
# (in.npz).
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from onnx_writer import save_model  # noqa: E402

out = sys.argv[1]
rng = np.random.default_rng(34)
w1 = rng.normal(0, 0.4, (8, 3, 3, 3))
b1 = rng.normal(0, 0.3, 8)
b1[5] = 20
w2 = rng.normal(0, 0.5, (8, 1, 3, 3))
b2 = rng.normal(0, 0.3, 8)
b2[2] = 18
inits = [numpy_helper.from_array(np.asarray(v, np.float32), n)
         for n, v in [("w1", w1), ("b1", b1), ("w2", w2), ("b2", b2), ("w3", rng.normal(0, 0.4, (4, 8, 1, 1))),
                      ("b3", rng.normal(0, 0.1, 4)), ("s1", 1.1), ("t1", 0.05), ("s2", 0.9), ("t2", -0.02),
                      ("s3", 1.05), ("t3", 0.1), ("s4", 0.95), ("t4", 0.0)]]


def affine(x, s, t, y):
    return [helper.make_node("Mul", [x, s], [y + "_s"]), helper.make_node("Add", [y + "_s", t], [y])]


nodes = [helper.make_node("Conv", ["input", "w1", "b1"], ["conv1"], pads=[1, 1, 1, 1]),
         *affine("conv1", "s1", "t1", "lab1"),
         helper.make_node("HardSwish", ["lab1"], ["hs1"]),
         *affine("hs1", "s2", "t2", "act1"),
         helper.make_node("Conv", ["act1", "w2", "b2"], ["dw"], pads=[1, 1, 1, 1], group=8),
         *affine("dw", "s3", "t3", "lab2"),
         helper.make_node("HardSwish", ["lab2"], ["hs2"]),
         *affine("hs2", "s4", "t4", "act2"),
         helper.make_node("Conv", ["act2", "w3", "b3"], ["output"])]
graph = helper.make_graph(nodes, "lcnet", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 16, 16])],
                          [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 4, 16, 16])], inits)
save_model(graph, os.path.join(out, "lcnet.onnx"), opset=14, ir_version=8, check=True)
os.makedirs(os.path.join(out, "samples"), exist_ok=True)
for i in range(8):
    x = rng.normal(0, 1, (1, 3, 16, 16)).astype(np.float32)
    np.savez(os.path.join(out, "samples", f"s{i}.npz"), input=x)
np.savez(os.path.join(out, "in.npz"), input=rng.normal(0, 1, (1, 3, 16, 16)).astype(np.float32))

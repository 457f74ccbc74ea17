# Writes elementwise.onnx (the element-wise ops of the chip path: broadcast
# sub/min/div/max, pow by an activation and by 2, prelu with a per-channel
# slope, and the fp32 functions exp, log, tanh, erf, sin, floor), 8
# calibration samples and a test input into the directory argv[1] (fixed seed).
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from onnx_writer import save_model  # noqa: E402

out = sys.argv[1]
rng = np.random.default_rng(5)
N, C, H, W = 1, 6, 5, 7
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [N, C, H, W])
b = helper.make_tensor_value_info("b", TensorProto.FLOAT, [1, C, 1, W])
outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("y", "p", "f")]
slope = numpy_helper.from_array(rng.uniform(0.05, 0.5, (C, 1, 1)).astype(np.float32), "slope")
two = numpy_helper.from_array(np.array(2.0, np.float32), "two")
nodes = [
    helper.make_node("Sub", ["x", "b"], ["d"], name="sub"),
    helper.make_node("Min", ["d", "x"], ["m"], name="min"),
    helper.make_node("Max", ["m", "b"], ["mx"], name="max"),
    helper.make_node("Mul", ["mx", "b"], ["mb"], name="mul"),
    helper.make_node("PRelu", ["mb", "slope"], ["pr"], name="prelu"),
    helper.make_node("Pow", ["pr", "two"], ["sq"], name="square"),
    helper.make_node("Exp", ["b"], ["eb"], name="exp"),
    helper.make_node("Div", ["sq", "eb"], ["y"], name="div"),
    helper.make_node("Abs", ["x"], ["ax"], name="abs"),
    helper.make_node("Pow", ["eb", "ax"], ["p"], name="pow"),
    helper.make_node("Log", ["eb"], ["l"], name="log"),
    helper.make_node("Tanh", ["l"], ["t"], name="tanh"),
    helper.make_node("Erf", ["t"], ["e"], name="erf"),
    helper.make_node("Sin", ["x"], ["s"], name="sin"),
    helper.make_node("Add", ["e", "s"], ["es"], name="add"),
    helper.make_node("Floor", ["es"], ["f"], name="floor"),
]
g = helper.make_graph(nodes, "elementwise", [x, b], outs, [slope, two])
save_model(g, os.path.join(out, "elementwise.onnx"))
os.makedirs(os.path.join(out, "samples"), exist_ok=True)
def sample():
    return {"x": rng.normal(0, 1, (N, C, H, W)).astype(np.float32),
            "b": rng.normal(0, 1, (1, C, 1, W)).astype(np.float32)}
for i in range(8):
    np.savez(os.path.join(out, "samples", f"s{i}.npz"), **sample())
np.savez(os.path.join(out, "in.npz"), **sample())

# Writes a small ONNX model (conv+relu, maxpool, 1x1 conv, residual add+relu,
# global average pool, gemm), calibration samples and a test input into the
# directory argv[1] (fixed seed).
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from onnx_writer import save_model  # noqa: E402

out = sys.argv[1]
rng = np.random.default_rng(11)


def const(name, shape, scale):
    return numpy_helper.from_array(rng.normal(0, scale, shape).astype(np.float32), name)


inits = [const("w1", (8, 3, 3, 3), 0.3), const("b1", (8,), 0.1), const("w2", (8, 8, 1, 1), 0.3),
         const("b2", (8,), 0.1), const("fw", (5, 8), 0.3), const("fb", (5,), 0.1)]
nodes = [
    helper.make_node("Conv", ["input", "w1", "b1"], ["conv1"], pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["conv1"], ["relu1"]),
    helper.make_node("MaxPool", ["relu1"], ["pool1"], kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node("Conv", ["pool1", "w2", "b2"], ["conv2"]),
    helper.make_node("Add", ["conv2", "pool1"], ["add"]),
    helper.make_node("Relu", ["add"], ["relu2"]),
    helper.make_node("GlobalAveragePool", ["relu2"], ["gap"]),
    helper.make_node("Flatten", ["gap"], ["flat"]),
    helper.make_node("Gemm", ["flat", "fw", "fb"], ["output"], transB=1),
]
graph = helper.make_graph(nodes, "flownet",
                          [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 16, 16])],
                          [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 5])], inits)
save_model(graph, os.path.join(out, "flownet.onnx"), ir_version=8, check=True)
os.makedirs(os.path.join(out, "samples"), exist_ok=True)
for i in range(8):
    np.savez(os.path.join(out, "samples", f"s{i}.npz"),
             input=rng.normal(0, 1, (1, 3, 16, 16)).astype(np.float32))
np.savez(os.path.join(out, "in.npz"), input=rng.normal(0, 1, (1, 3, 16, 16)).astype(np.float32))

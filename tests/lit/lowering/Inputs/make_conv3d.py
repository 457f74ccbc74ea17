"""A 3-D convolution net (C3D's layer kinds): Conv 3x3x3 with depth stride 2
and pads, Relu, MaxPool 2x2x2, a grouped Conv with depth dilation 2, Add,
AveragePool 2x1x1. Writes DIR/conv3d.onnx, DIR/conv3d_in.npz and four
calibration samples DIR/samples/s*.npz."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from onnx_writer import save_model  # noqa: E402

out = sys.argv[1]
rng = np.random.default_rng(3)
W1 = (rng.standard_normal((8, 3, 3, 3, 3)) * 0.2).astype(np.float32)
B1 = (rng.standard_normal(8) * 0.1).astype(np.float32)
W2 = (rng.standard_normal((8, 4, 3, 3, 3)) * 0.2).astype(np.float32)
nodes = [
    helper.make_node("Conv", ["x", "W1", "B1"], ["c1"], kernel_shape=[3, 3, 3], pads=[1, 1, 1, 1, 1, 1],
                     strides=[2, 1, 1]),
    helper.make_node("Relu", ["c1"], ["r1"]),
    helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2, 2], strides=[2, 2, 2]),
    helper.make_node("Conv", ["p1", "W2"], ["c2"], kernel_shape=[3, 3, 3], pads=[2, 1, 1, 2, 1, 1],
                     dilations=[2, 1, 1], group=2),
    helper.make_node("Add", ["c2", "p1"], ["sum"]),
    helper.make_node("AveragePool", ["sum"], ["y"], kernel_shape=[2, 1, 1], strides=[1, 1, 1]),
]
graph = helper.make_graph(nodes, "conv3d", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 12, 12])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 1, 6, 6])],
                          [numpy_helper.from_array(W1, "W1"), numpy_helper.from_array(B1, "B1"),
                           numpy_helper.from_array(W2, "W2")])
save_model(graph, os.path.join(out, "conv3d.onnx"), ir_version=8, check=True)
np.savez(os.path.join(out, "conv3d_in.npz"), x=rng.standard_normal((1, 3, 8, 12, 12)).astype(np.float32))
os.makedirs(os.path.join(out, "samples"), exist_ok=True)
for i in range(4):
    np.savez(os.path.join(out, "samples", f"s{i}.npz"), x=rng.standard_normal((1, 3, 8, 12, 12)).astype(np.float32))

# A 3-D max pool with depth dilation (its taps 2 depths apart), then the
# refused 3-D pools (one-line import errors): an average that leaves out its
# height pads, ceil-mode windows past the depth.
pools = {
    "max_depth_dilation": helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2, 2], dilations=[2, 1, 1]),
    "avg_pads_excluded": helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[2, 3, 3], pads=[0, 1, 1, 0, 1, 1]),
    "max_ceil_depth": helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 2, 2], strides=[2, 2, 2], ceil_mode=1),
}
for name, node in pools.items():
    g = helper.make_graph([node], name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 12, 12])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    save_model(g, os.path.join(out, name + ".onnx"), ir_version=8)

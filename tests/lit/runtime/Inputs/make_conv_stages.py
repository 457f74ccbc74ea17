"""A fully convolutional net (conv 3x3 -> relu -> conv 3x3), so that any
input width is valid: the stages of a multi-stage bmodel.
  make_conv_stages.py DIR SEED   writes DIR/conv.onnx (weights from SEED)
  make_conv_stages.py DIR SEED --input W   writes DIR/in_W.npz, x [1,3,16,W]"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from onnx_writer import save_model  # noqa: E402

out, seed = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(seed)
if len(sys.argv) == 5 and sys.argv[3] == "--input":
    width = int(sys.argv[4])
    np.savez(os.path.join(out, f"in_{width}.npz"), x=rng.standard_normal((1, 3, 16, width)).astype(np.float32))
    sys.exit(0)
W1 = (rng.standard_normal((8, 3, 3, 3)) * 0.3).astype(np.float32)
B1 = (rng.standard_normal(8) * 0.1).astype(np.float32)
W2 = (rng.standard_normal((4, 8, 3, 3)) * 0.3).astype(np.float32)
nodes = [
    helper.make_node("Conv", ["x", "W1", "B1"], ["c1"], pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c1"], ["r1"]),
    helper.make_node("Conv", ["r1", "W2"], ["y"], pads=[1, 1, 1, 1]),
]
f32 = TensorProto.FLOAT
# The width is symbolic: tpuc import --input-shapes fixes it per stage.
graph = helper.make_graph(
    nodes, "conv_stages", [helper.make_tensor_value_info("x", f32, [1, 3, 16, "w"])],
    [helper.make_tensor_value_info("y", f32, [1, 4, 16, "w"])],
    [numpy_helper.from_array(W1, "W1"), numpy_helper.from_array(B1, "B1"), numpy_helper.from_array(W2, "W2")])
save_model(graph, os.path.join(out, "conv.onnx"), ir_version=8, check=True)

"""Integer tensors among float ones, as a detector's labels: ArgMax of x's
rows (int64, on the host), a Concat of it with itself and a Gather of one
of its columns with constant indices (chip ops on an int64 tensor), a Cast
back to float added to a conv of x. Writes DIR/int_tensors.onnx and
DIR/x{0,1,2}.npz."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from onnx_writer import save_model  # noqa: E402

out = sys.argv[1]
rng = np.random.default_rng(5)
w = (rng.standard_normal((4, 3, 1, 1)) * 0.5).astype(np.float32)
nodes = [
    helper.make_node("Conv", ["x", "w"], ["c"]),
    helper.make_node("ArgMax", ["c"], ["best"], axis=1, keepdims=1),
    helper.make_node("Concat", ["best", "best"], ["pair"], axis=1),
    helper.make_node("Gather", ["pair", "col"], ["picked"], axis=1),
    helper.make_node("Cast", ["picked"], ["picked_f"], to=TensorProto.FLOAT),
    helper.make_node("Add", ["c", "picked_f"], ["y"]),
]
graph = helper.make_graph(nodes, "int_tensors", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 5, 6])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 5, 6]),
                           helper.make_tensor_value_info("pair", TensorProto.INT64, [1, 2, 5, 6])],
                          [helper.make_tensor("w", TensorProto.FLOAT, [4, 3, 1, 1], w.ravel()),
                           helper.make_tensor("col", TensorProto.INT64, [1], [1])])
save_model(graph, os.path.join(out, "int_tensors.onnx"))
for i in range(3):
    np.savez(os.path.join(out, f"x{i}.npz"), x=rng.standard_normal((1, 3, 5, 6)).astype(np.float32))

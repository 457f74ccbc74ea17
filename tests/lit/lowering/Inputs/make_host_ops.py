"""A small conv net ending in ops the BM1684 has no command for, as real
exports end: TopK (largest and smallest), ArgMax/ArgMin, casts between
float and int64, and a Gather whose indices are computed (an ArgMax). The
chip runs the convs; the rest goes to CPU sub-nets.
Writes DIR/host_ops.onnx, DIR/host_ops_in.npz and DIR/host_ops_samples/."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from onnx_writer import save_model  # noqa: E402

out = sys.argv[1]
rng = np.random.default_rng(7)
W = (rng.standard_normal((8, 4, 3, 3)) * 0.3).astype(np.float32)
W2 = (rng.standard_normal((8, 8, 1, 1)) * 0.3).astype(np.float32)
table = rng.standard_normal((8, 5)).astype(np.float32)
nodes = [
    helper.make_node("Conv", ["x", "W"], ["c"], pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c"], ["r"]),
    helper.make_node("GlobalAveragePool", ["r"], ["gap"]),
    helper.make_node("Flatten", ["gap"], ["scores"]),
    helper.make_node("TopK", ["scores", "k3"], ["top_values", "top_indices"], axis=1),
    helper.make_node("TopK", ["c", "k2"], ["low_values", "low_indices"], axis=-1, largest=0),
    helper.make_node("ArgMin", ["c"], ["argmin"], axis=2, keepdims=1),
    helper.make_node("ArgMax", ["scores"], ["best"], axis=1, keepdims=0),
    helper.make_node("Gather", ["table", "best"], ["embedding"], axis=0),
    helper.make_node("Cast", ["argmin"], ["argmin_f"], to=TensorProto.FLOAT),
    helper.make_node("Conv", ["r", "W2"], ["c2"]),
    helper.make_node("Add", ["c2", "low_values_sum"], ["mixed"]),
    helper.make_node("ReduceSum", ["low_values", "axis3"], ["low_values_sum"], keepdims=1),
    helper.make_node("Mul", ["argmin_f", "half"], ["argmin_half"]),
]
# topological order for the checker
order = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 11, 13]
nodes = [nodes[i] for i in order]
f32 = TensorProto.FLOAT
graph = helper.make_graph(
    nodes, "host_ops", [helper.make_tensor_value_info("x", f32, [1, 4, 6, 6])],
    [helper.make_tensor_value_info("top_values", f32, [1, 3]),
     helper.make_tensor_value_info("top_indices", TensorProto.INT64, [1, 3]),
     helper.make_tensor_value_info("low_indices", TensorProto.INT64, [1, 8, 6, 2]),
     helper.make_tensor_value_info("embedding", f32, [1, 5]),
     helper.make_tensor_value_info("mixed", f32, [1, 8, 6, 6]),
     helper.make_tensor_value_info("argmin_half", f32, [1, 8, 1, 6])],
    [numpy_helper.from_array(W, "W"), numpy_helper.from_array(W2, "W2"), numpy_helper.from_array(table, "table"),
     numpy_helper.from_array(np.array([3], np.int64), "k3"), numpy_helper.from_array(np.array([2], np.int64), "k2"),
     numpy_helper.from_array(np.array(0.5, np.float32), "half"), numpy_helper.from_array(np.array([3], np.int64), "axis3")])
save_model(graph, os.path.join(out, "host_ops.onnx"), ir_version=8, check=True)
np.savez(os.path.join(out, "host_ops_in.npz"), x=rng.standard_normal((1, 4, 6, 6)).astype(np.float32))
os.makedirs(os.path.join(out, "host_ops_samples"), exist_ok=True)
for i in range(8):
    np.savez(os.path.join(out, "host_ops_samples", f"s{i}.npz"), x=rng.standard_normal((1, 4, 6, 6)).astype(np.float32))

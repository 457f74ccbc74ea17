"""A conv whose filter is a graph input and whose bias is a constant, and a
transposed conv whose bias is a graph input and whose filter is a constant:
each mixes an operand computed at run time with a weight.
Writes DIR/conv_act.onnx and DIR/conv_act_in.npz."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from onnx_writer import save_model  # noqa: E402

out = sys.argv[1]
rng = np.random.default_rng(11)
f32 = TensorProto.FLOAT
nodes = [helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1]),
         helper.make_node("ConvTranspose", ["y", "wt", "bt"], ["z"], strides=[2, 2])]
graph = helper.make_graph(
    nodes, "conv_act",
    [helper.make_tensor_value_info("x", f32, [1, 2, 5, 5]), helper.make_tensor_value_info("w", f32, [3, 2, 3, 3]),
     helper.make_tensor_value_info("bt", f32, [4])],
    [helper.make_tensor_value_info("y", f32, [1, 3, 5, 5]), helper.make_tensor_value_info("z", f32, [1, 4, 11, 11])],
    [numpy_helper.from_array(rng.standard_normal(3).astype(np.float32), "b"),
     numpy_helper.from_array(rng.standard_normal((3, 4, 3, 3)).astype(np.float32), "wt")])
save_model(graph, os.path.join(out, "conv_act.onnx"), ir_version=8, check=True)
np.savez(os.path.join(out, "conv_act_in.npz"), x=rng.standard_normal((1, 2, 5, 5)).astype(np.float32),
         w=rng.standard_normal((3, 2, 3, 3)).astype(np.float32), bt=rng.standard_normal(4).astype(np.float32))

# Writes window_net.onnx (average pooling that excludes its padding in ceil
# mode, a bilinear resize by non-integer factors, relu, a nearest resize down
# and up by non-integer factors) and three random inputs x0..x2.npz in DIR.
#   make_window_net.py DIR
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

out = sys.argv[1]
nodes = [
    helper.make_node("AveragePool", ["x"], ["pool"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                     ceil_mode=1, count_include_pad=0),
    helper.make_node("Resize", ["pool", "", "s1"], ["lin"], mode="linear", coordinate_transformation_mode="half_pixel"),
    helper.make_node("Relu", ["lin"], ["relu"]),
    helper.make_node("Resize", ["relu", "", "s2"], ["y"], mode="nearest", coordinate_transformation_mode="asymmetric",
                     nearest_mode="floor"),
]
inits = [helper.make_tensor("s1", TensorProto.FLOAT, [4], [1, 1, 1.7, 2.3]),
         helper.make_tensor("s2", TensorProto.FLOAT, [4], [1, 1, 0.6, 1.5])]
# pool (1, 3, 7, 6) -> lin (1, 3, 11, 13) -> y (1, 3, 6, 19)
graph = helper.make_graph(nodes, "window_net", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 13, 11])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 6, 19])], inits)
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), os.path.join(out, "window_net.onnx"))
rng = np.random.default_rng(3)
for i in range(3):
    np.savez(os.path.join(out, f"x{i}.npz"), x=rng.normal(size=(1, 3, 13, 11)).astype(np.float32))

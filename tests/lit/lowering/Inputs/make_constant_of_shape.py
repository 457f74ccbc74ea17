"""ConstantOfShape of a shape computed at run time, as SSDLite's per-class
labels are made: the rows of x above 0 (NonZero, a count from the data),
their Shape, then ConstantOfShape of it with an int64 value (labels, 7) and
a float one (0.5), each added to something of the rows so that both are
read. Writes DIR/cos.onnx and DIR/cos_in{1,2}.npz (3 and 5 rows kept)."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from onnx_writer import save_model  # noqa: E402

out = sys.argv[1]
nodes = [
    helper.make_node("Greater", ["x", "zero"], ["pos"]),
    helper.make_node("NonZero", ["pos"], ["idx"]),
    helper.make_node("Shape", ["idx"], ["idx_shape"]),
    helper.make_node("ConstantOfShape", ["idx_shape"], ["sevens"],
                     value=helper.make_tensor("v", TensorProto.INT64, [1], [7])),
    helper.make_node("ConstantOfShape", ["idx_shape"], ["halves"],
                     value=helper.make_tensor("h", TensorProto.FLOAT, [1], [0.5])),
    helper.make_node("Add", ["idx", "sevens"], ["labels"]),
    helper.make_node("Cast", ["idx"], ["idx_f"], to=TensorProto.FLOAT),
    helper.make_node("Mul", ["idx_f", "halves"], ["scaled"]),
]
graph = helper.make_graph(nodes, "constant_of_shape", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8])],
                          [helper.make_tensor_value_info("labels", TensorProto.INT64, [1, None]),
                           helper.make_tensor_value_info("scaled", TensorProto.FLOAT, [1, None])],
                          [helper.make_tensor("zero", TensorProto.FLOAT, [], [0.0])])
save_model(graph, os.path.join(out, "cos.onnx"))
np.savez(os.path.join(out, "cos_in1.npz"), x=np.array([1, -1, 2, -2, 0, 3, -3, -1], np.float32))
np.savez(os.path.join(out, "cos_in2.npz"), x=np.array([1, 2, -1, 3, 4, -2, 5, 0], np.float32))

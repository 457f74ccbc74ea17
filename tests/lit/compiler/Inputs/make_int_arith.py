"""make_int_arith.py DIR: DIR/int_arith.onnx, integer Div and Mod (fmod 0 and 1) of
two int64 inputs computed at run time, with their products back (q * b), and
DIR/int_arith_in.npz, signed operands that do not divide evenly."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from onnx_writer import save_model  # noqa: E402

out = sys.argv[1]
I64 = TensorProto.INT64
nodes = [
    helper.make_node("Div", ["a", "b"], ["q"]),
    helper.make_node("Mul", ["q", "b"], ["qb"]),
    helper.make_node("Mod", ["a", "b"], ["mod"], fmod=0),
    helper.make_node("Mod", ["a", "b"], ["fmod"], fmod=1),
]
graph = helper.make_graph(nodes, "int_arith", [helper.make_tensor_value_info(n, I64, [8]) for n in ("a", "b")],
                          [helper.make_tensor_value_info(n, I64, [8]) for n in ("q", "qb", "mod", "fmod")])
save_model(graph, os.path.join(out, "int_arith.onnx"), ir_version=8)
np.savez(os.path.join(out, "int_arith_in.npz"), a=np.array([7, -7, 7, -7, 9, 0, 1000001, -5], np.int64),
         b=np.array([2, 2, -2, -2, 3, 5, 7, 1000], np.int64))

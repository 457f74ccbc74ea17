"""A net whose bmodel is a chain of TPU and CPU sub-nets: conv (chip) ->
ArgMax over channels (host) -> Cast to float (host) -> times the conv
output (chip).
  make_cpu_subnets.py DIR   writes DIR/subnets.onnx and DIR/subnets_in.npz (x [1,3,8,8])"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from onnx_writer import save_model  # noqa: E402

out = sys.argv[1]
rng = np.random.default_rng(3)
W = (rng.standard_normal((4, 3, 3, 3)) * 0.5).astype(np.float32)
nodes = [
    helper.make_node("Conv", ["x", "W"], ["c"], pads=[1, 1, 1, 1]),
    helper.make_node("ArgMax", ["c"], ["best"], axis=1, keepdims=1),
    helper.make_node("Cast", ["best"], ["best_f"], to=TensorProto.FLOAT),
    helper.make_node("Mul", ["best_f", "c"], ["y"]),
]
graph = helper.make_graph(nodes, "subnets", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])],
                          [numpy_helper.from_array(W, "W")])
save_model(graph, os.path.join(out, "subnets.onnx"), ir_version=8, check=True)
np.savez(os.path.join(out, "subnets_in.npz"), x=rng.standard_normal((1, 3, 8, 8)).astype(np.float32))

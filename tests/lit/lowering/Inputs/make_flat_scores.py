# Writes flat_scores.onnx and its inputs x0..x2.npz in DIR: a detector's
# score tail as RetinaNet exports it. Scores x (ROWS, COLS), by default
# (14400, 91) -> Sigmoid -> Reshape [-1] (1310400 elements, past a command
# field's 65535) -> the scores above 0.7 kept (Greater, Where) and the 100
# best (TopK, a host op).
#   make_flat_scores.py DIR [ROWS COLS]
import os
import sys

import numpy as np
from onnx import TensorProto, helper
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from onnx_writer import save_model  # noqa: E402

out = sys.argv[1]
rows, cols = (int(sys.argv[2]), int(sys.argv[3])) if len(sys.argv) > 3 else (14400, 91)
n = rows * cols
nodes = [helper.make_node("Sigmoid", ["x"], ["s"]),
         helper.make_node("Reshape", ["s", "flat_shape"], ["flat"]),
         helper.make_node("Greater", ["flat", "thresh"], ["above"]),
         helper.make_node("Where", ["above", "flat", "zero"], ["kept"]),
         helper.make_node("TopK", ["flat", "k"], ["best", "best_idx"])]
inits = [helper.make_tensor("flat_shape", TensorProto.INT64, [1], [-1]),
         helper.make_tensor("thresh", TensorProto.FLOAT, [], [0.7]),
         helper.make_tensor("zero", TensorProto.FLOAT, [], [0.0]),
         helper.make_tensor("k", TensorProto.INT64, [1], [100])]
outputs = [helper.make_tensor_value_info("kept", TensorProto.FLOAT, [n]),
           helper.make_tensor_value_info("best", TensorProto.FLOAT, [100]),
           helper.make_tensor_value_info("best_idx", TensorProto.INT64, [100])]
graph = helper.make_graph(nodes, "flat_scores", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, cols])],
                          outputs, inits)
save_model(graph, os.path.join(out, "flat_scores.onnx"))
# Logits around -1 (sigmoid 0.27), 2 % of the scores above 0.7, none
# within 0.005 of it (fp32 rounding of any sigmoid cannot move one across),
# distinct values, so the top 100 and their order are one answer.
rng = np.random.default_rng(7)
edge = np.log(0.7 / 0.3)
for i in range(3):
    x = rng.standard_normal((rows, cols)) * 0.9 - 1.0
    x[np.abs(x - edge) < 0.02] += 0.04
    x = x.astype(np.float32)
    np.savez(os.path.join(out, f"x{i}.npz"), x=x)

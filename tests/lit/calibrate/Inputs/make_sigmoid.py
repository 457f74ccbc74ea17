# Writes into argv[1] a detector-like ONNX model (conv -> sigmoid, a sparse
# probability map: most pixels near 0, a few near 1) and 8 samples.
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from onnx_writer import save_model  # noqa: E402

out = sys.argv[1]
rng = np.random.default_rng(7)
w = numpy_helper.from_array(np.full((1, 1, 1, 1), 1.0, np.float32), "w")
b = numpy_helper.from_array(np.zeros(1, np.float32), "b")
nodes = [helper.make_node("Conv", ["input", "w", "b"], ["logits"]),
         helper.make_node("Sigmoid", ["logits"], ["prob"])]
graph = helper.make_graph(nodes, "det", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 1, 32, 32])],
                          [helper.make_tensor_value_info("prob", TensorProto.FLOAT, [1, 1, 32, 32])], [w, b])
save_model(graph, os.path.join(out, "det.onnx"), ir_version=8)
os.makedirs(os.path.join(out, "samples"), exist_ok=True)
for i in range(8):
    x = rng.normal(-6, 1, (1, 1, 32, 32)).astype(np.float32)
    y, xx = rng.integers(0, 28, 2)
    x[0, 0, y:y + 3, xx:xx + 3] = 6  # a small "text" region
    np.savez(os.path.join(out, "samples", f"s{i}.npz"), input=x)

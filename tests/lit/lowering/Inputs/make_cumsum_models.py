"""Writes the ONNX model of cumsum_deploy.test into argv[1]: CumSum over each
axis of a (2, 3, 20, 4) input, exclusive and reversed, a 1-D running sum
and one over an axis of 40 (longer than the 16 rows the chip's pad fields
could give), with 8 calibration samples and a test input (fixed seed).

Run with /usr/bin/python3 (it has the onnx package).
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from onnx_writer import save_model  # noqa: E402

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(11)
X = (2, 3, 20, 4)
cases = [  # output, axis, exclusive, reverse
    ("axis0", 0, 0, 0), ("axis1", 1, 0, 0), ("axis2", 2, 0, 0), ("axis3", -1, 0, 0),
    ("exclusive", 2, 1, 0), ("reverse", 1, 0, 1), ("reverse_exclusive", 3, 1, 1)]
nodes, inits = [], []
for name, axis, exclusive, reverse in cases:
    inits.append(numpy_helper.from_array(np.array(axis, np.int64), name + "_axis"))
    nodes.append(helper.make_node("CumSum", ["x", name + "_axis"], [name], name=name, exclusive=exclusive,
                                  reverse=reverse))
# A 1-D view of x and a long axis (3 x 40 x 2) of a reshape of it.
inits.append(numpy_helper.from_array(np.array([480], np.int64), "flat_shape"))
inits.append(numpy_helper.from_array(np.array([3, 40, 4], np.int64), "long_shape"))
inits.append(numpy_helper.from_array(np.array(0, np.int64), "zero"))
inits.append(numpy_helper.from_array(np.array(1, np.int64), "one"))
nodes += [helper.make_node("Reshape", ["x", "flat_shape"], ["flat"]),
          helper.make_node("CumSum", ["flat", "zero"], ["oned"], name="oned"),
          helper.make_node("Reshape", ["x", "long_shape"], ["long_in"]),
          helper.make_node("CumSum", ["long_in", "one"], ["long"], name="long")]
outputs = [c[0] for c in cases] + ["oned", "long"]
graph = helper.make_graph(nodes, "cumsum", [helper.make_tensor_value_info("x", TensorProto.FLOAT, X)],
                          [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
                          initializer=inits)
save_model(graph, os.path.join(out, "cumsum.onnx"), opset=14)
os.makedirs(os.path.join(out, "cumsum_samples"), exist_ok=True)
for i in range(8):
    np.savez(os.path.join(out, "cumsum_samples", f"s{i}.npz"), x=rng.normal(0, 1, X).astype(np.float32))
np.savez(os.path.join(out, "cumsum_in.npz"), x=rng.normal(0, 1, X).astype(np.float32))

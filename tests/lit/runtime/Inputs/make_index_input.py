"""An embedding-style model whose indices are a graph input (int64, as exported):
y = relu(Gather(table_in, idx)), z = GatherElements(x2, idx2). Writes DIR/idx.onnx,
DIR/idx_in.npz, DIR/idx_big.npz (an index beyond int32) and four calibration samples."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from onnx_writer import save_model  # noqa: E402

out = sys.argv[1]
rng = np.random.default_rng(3)
g = helper.make_graph(
    [helper.make_node("Gather", ["x", "idx"], ["y0"], axis=0), helper.make_node("Relu", ["y0"], ["y"]),
     helper.make_node("GatherElements", ["x", "idx2"], ["z"], axis=1)],
    "idx",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, 3]),
     helper.make_tensor_value_info("idx", TensorProto.INT64, [4]),
     helper.make_tensor_value_info("idx2", TensorProto.INT64, [5, 2])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 3]),
     helper.make_tensor_value_info("z", TensorProto.FLOAT, [5, 2])])
save_model(g, os.path.join(out, "idx.onnx"), ir_version=8, check=True)


def sample():
    return {"x": rng.standard_normal((5, 3)).astype(np.float32), "idx": rng.integers(-5, 5, 4).astype(np.int64),
            "idx2": rng.integers(-3, 3, (5, 2)).astype(np.int64)}


np.savez(os.path.join(out, "idx_in.npz"), **sample())
big = sample()
big["idx"][1] = 1 << 40
np.savez(os.path.join(out, "idx_big.npz"), **big)
os.makedirs(os.path.join(out, "samples"), exist_ok=True)
for i in range(4):
    np.savez(os.path.join(out, "samples", f"s{i}.npz"), **sample())

"""ONNX BatchNormalization models (x [2,3,4,5], epsilon 1e-3) whose per-channel operands are partly graph inputs
(computed at run time), with their inputs, the outputs NumPy computes from ONNX's definition
(Y = (X - mean) / sqrt(var + eps) * scale + B) and 4 calibration samples each:
  all     scale, B, mean and var inputs
  scale   scale an input, the others initializers
  var     var an input, the others initializers

    make_batchnorm_activations.py DIR"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from onnx_writer import save_model  # noqa: E402

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
EPS = 1e-3


def model(name, runtime):
    rng = np.random.default_rng(len(name))
    vals = {"x": rng.standard_normal([2, 3, 4, 5]).astype(np.float32), "scale": rng.standard_normal(3).astype(np.float32),
            "b": rng.standard_normal(3).astype(np.float32), "mean": rng.standard_normal(3).astype(np.float32),
            "var": rng.uniform(0.2, 2, 3).astype(np.float32)}
    feeds = {k: v for k, v in vals.items() if k == "x" or k in runtime}
    inputs = [helper.make_tensor_value_info(k, TensorProto.FLOAT, v.shape) for k, v in feeds.items()]
    inits = [helper.make_tensor(k, TensorProto.FLOAT, v.shape, v) for k, v in vals.items() if k not in feeds]
    node = helper.make_node("BatchNormalization", list(vals), ["y"], epsilon=EPS)
    graph = helper.make_graph([node], name, inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 4, 5])],
                              initializer=inits)
    save_model(graph, os.path.join(out, name + ".onnx"), opset=15, check=True)
    c = lambda k: vals[k].astype(np.float64).reshape(1, 3, 1, 1)  # noqa: E731
    y = (vals["x"].astype(np.float64) - c("mean")) / np.sqrt(c("var") + EPS) * c("scale") + c("b")
    np.savez(os.path.join(out, name + "_in.npz"), **feeds)
    np.savez(os.path.join(out, name + "_want.npz"), y=y.astype(np.float32))
    os.makedirs(os.path.join(out, name + "_samples"), exist_ok=True)
    for s in range(4):
        sample = {k: (rng.uniform(0.2, 2, v.shape) if k == "var" else rng.standard_normal(v.shape)).astype(np.float32)
                  for k, v in feeds.items()}
        np.savez(os.path.join(out, name + "_samples", f"s{s}.npz"), **sample)


model("all", {"scale", "b", "mean", "var"})
model("scale", {"scale"})
model("var", {"var"})

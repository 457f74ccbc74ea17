"""ONNX Gemm models whose right operand B is a graph input (a runtime activation), with their inputs and
the outputs NumPy computes from ONNX's definition (Y = alpha * A' B' + beta * C):
  plain     A [3,5] B [5,4], no C
  all       transA, transB, alpha 0.25, beta 0.35, C a [1,4] input
  matrix_c  transB, beta 2, C a [3,4] input
  const_c   transA, alpha 0.5, C a [4] initializer
  lconst    A an initializer (no lowering: a constant left operand times an activation)
and, per model, 4 calibration samples in DIR/<name>_samples.

    make_gemm_activations.py DIR"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from onnx_writer import save_model  # noqa: E402

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def model(name, trans_a, trans_b, alpha, beta, c_shape=None, c_const=False, a_const=False):
    rng = np.random.default_rng(len(name))
    a_shape, b_shape = [5, 3] if trans_a else [3, 5], [4, 5] if trans_b else [5, 4]
    values = {"a": rng.standard_normal(a_shape).astype(np.float32), "b": rng.standard_normal(b_shape).astype(np.float32)}
    if c_shape:
        values["c"] = rng.standard_normal(c_shape).astype(np.float32)
    consts = {"a"} if a_const else {"c"} if c_const else set()
    inputs = [helper.make_tensor_value_info(k, TensorProto.FLOAT, v.shape) for k, v in values.items() if k not in consts]
    inits = [helper.make_tensor(k, TensorProto.FLOAT, values[k].shape, values[k].ravel()) for k in consts]
    node = helper.make_node("Gemm", list(values), ["y"], alpha=alpha, beta=beta, transA=trans_a, transB=trans_b)
    graph = helper.make_graph([node], name, inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])],
                              initializer=inits)
    save_model(graph, os.path.join(out, name + ".onnx"), check=True)
    a, b = values["a"].astype(np.float64), values["b"].astype(np.float64)
    y = alpha * (a.T if trans_a else a) @ (b.T if trans_b else b)
    if c_shape:
        y = y + beta * values["c"].astype(np.float64)
    feeds = {k: v for k, v in values.items() if k not in consts}
    np.savez(os.path.join(out, name + "_in.npz"), **feeds)
    np.savez(os.path.join(out, name + "_want.npz"), y=y.astype(np.float32))
    os.makedirs(os.path.join(out, name + "_samples"), exist_ok=True)
    for s in range(4):
        np.savez(os.path.join(out, name + "_samples", f"s{s}.npz"),
                 **{k: rng.standard_normal(v.shape).astype(np.float32) for k, v in feeds.items()})


model("plain", 0, 0, 1.0, 1.0)
model("all", 1, 1, 0.25, 0.35, [1, 4])
model("matrix_c", 0, 1, 1.0, 2.0, [3, 4])
model("const_c", 1, 0, 0.5, 1.0, [4], c_const=True)
model("lconst", 0, 0, 1.0, 1.0, a_const=True)

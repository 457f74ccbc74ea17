"""Writes the small ONNX models the importer lit tests use into argv[1].

Run with /usr/bin/python3 (it has the onnx package). Deterministic: fixed values.
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from onnx_writer import save_model  # noqa: E402

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def save(name, nodes, inputs, outputs, inits=(), opset=13):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    model = save_model(graph, os.path.join(out, name + ".onnx"), opset=opset)


def vi(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


# Two unsupported op types in one model (one of them twice) beside supported ones.
save("unsupported",
     [helper.make_node("Relu", ["x"], ["a"], name="ok_relu"),
      helper.make_node("Unique", ["a"], ["b"], name="u1"),
      helper.make_node("TopK", ["a", "k"], ["c", "d"], name="topk"),
      helper.make_node("Unique", ["a"], ["e"], name="u2"),
      helper.make_node("Hardmax", ["a"], ["f"], name="hm")],
     [vi("x", [2, 3])], [vi("b", None), vi("c", None), vi("e", None), vi("f", None)],
     [const("k", np.array([1], np.int64))])

# A dynamic batch dimension.
save("dynamic", [helper.make_node("Relu", ["x"], ["y"], name="r")],
     [vi("x", ["N", 3, 8, 8])], [vi("y", ["N", 3, 8, 8])])

# Shape arithmetic on a dynamic input: Shape -> Gather -> Unsqueeze -> Concat -> Reshape.
save("shape_chain",
     [helper.make_node("Shape", ["x"], ["s"], name="shape"),
      helper.make_node("Gather", ["s", "i0"], ["n"], name="gather", axis=0),
      helper.make_node("Unsqueeze", ["n", "ax0"], ["n1"], name="unsq"),
      helper.make_node("Concat", ["n1", "minus1"], ["target"], name="cat", axis=0),
      helper.make_node("Reshape", ["x", "target"], ["y"], name="flat")],
     [vi("x", ["N", 3, 4, 4])], [vi("y", None)],
     [const("i0", np.array(0, np.int64)), const("ax0", np.array([0], np.int64)),
      const("minus1", np.array([-1], np.int64))])

# Opset differences: attributes in old opsets, inputs in new ones.
for opset in (9, 13):
    nodes = []
    inits = []
    if opset < 11:
        nodes.append(helper.make_node("Clip", ["x"], ["c"], name="clip", min=0.0, max=6.0))
        nodes.append(helper.make_node("Pad", ["c"], ["p"], name="pad", pads=[0, 0, 1, 2, 0, 0, 1, 2], value=0.5))
        nodes.append(helper.make_node("Split", ["p"], ["s0", "s1"], name="split", axis=1, split=[1, 2]))
        nodes.append(helper.make_node("Squeeze", ["s0"], ["q"], name="squeeze", axes=[1]))
        nodes.append(helper.make_node("ReduceSum", ["s1"], ["r"], name="rsum", axes=[2, 3], keepdims=0))
    else:
        inits += [const("lo", np.array(0, np.float32)), const("hi", np.array(6, np.float32)),
                  const("pads", np.array([0, 0, 1, 2, 0, 0, 1, 2], np.int64)),
                  const("pv", np.array(0.5, np.float32)), const("sp", np.array([1, 2], np.int64)),
                  const("sq", np.array([1], np.int64)), const("ra", np.array([-2, -1], np.int64))]
        nodes.append(helper.make_node("Clip", ["x", "lo", "hi"], ["c"], name="clip"))
        nodes.append(helper.make_node("Pad", ["c", "pads", "pv"], ["p"], name="pad"))
        nodes.append(helper.make_node("Split", ["p", "sp"], ["s0", "s1"], name="split", axis=1))
        nodes.append(helper.make_node("Squeeze", ["s0", "sq"], ["q"], name="squeeze"))
        nodes.append(helper.make_node("ReduceSum", ["s1", "ra"], ["r"], name="rsum", keepdims=0))
    save("opset%d" % opset, nodes, [vi("x", [1, 3, 4, 4])], [vi("q", None), vi("r", None)], inits, opset)

# Resize by scales and by sizes.
save("resize_scales",
     [helper.make_node("Resize", ["x", "", "sc"], ["y"], name="rs", mode="nearest",
                       coordinate_transformation_mode="asymmetric", nearest_mode="floor")],
     [vi("x", [1, 2, 4, 4])], [vi("y", None)], [const("sc", np.array([1, 1, 2, 2], np.float32))])
save("resize_sizes",
     [helper.make_node("Resize", ["x", "", "", "sz"], ["y"], name="rs", mode="linear",
                       coordinate_transformation_mode="align_corners")],
     [vi("x", [1, 2, 4, 4])], [vi("y", None)], [const("sz", np.array([1, 2, 7, 9], np.int64))])

# Conv + BN + Relu with weights; weights go to the npz.
w = np.arange(4 * 3 * 3 * 3, dtype=np.float32).reshape(4, 3, 3, 3) / 100
save("conv_bn_relu",
     [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
      helper.make_node("BatchNormalization", ["c", "g", "b", "m", "v"], ["bn"], name="bn", epsilon=1e-3),
      helper.make_node("Relu", ["bn"], ["y"], name="relu")],
     [vi("x", [1, 3, 8, 8])], [vi("y", None)],
     [const("w", w), const("g", np.array([1, 2, 3, 4], np.float32)),
      const("b", np.array([0.1, 0.2, 0.3, 0.4], np.float32)), const("m", np.zeros(4, np.float32)),
      const("v", np.ones(4, np.float32))])

# A conv whose weight does not fit the input channels.
save("bad_conv", [helper.make_node("Conv", ["x", "w"], ["y"], name="conv_bad")],
     [vi("x", [1, 3, 8, 8])], [vi("y", None)], [const("w", np.zeros((4, 5, 3, 3), np.float32))])

# External data: good, out of range, escaping the model directory.
for kind in ("good", "short", "escape"):
    t = const("w", np.arange(12, dtype=np.float32).reshape(3, 4))
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    location = {"good": "ext.bin", "short": "ext.bin", "escape": "../ext.bin"}[kind]
    for key, value in (("location", location), ("offset", "16"), ("length", "48" if kind != "short" else "64")):
        entry = t.external_data.add()
        entry.key, entry.value = key, value
    save("external_" + kind, [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
         [vi("x", [2, 3])], [vi("y", None)], [t])
with open(os.path.join(out, "ext.bin"), "wb") as f:
    f.write(b"\0" * 16 + np.arange(12, dtype=np.float32).tobytes())

# LayerNorm and GELU as torch.onnx exports them before opsets 17/20.
save("layernorm_gelu",
     [helper.make_node("ReduceMean", ["x"], ["mean"], name="ln_mean", axes=[-1]),
      helper.make_node("Sub", ["x", "mean"], ["d"], name="ln_sub"),
      helper.make_node("Pow", ["d", "two"], ["d2"], name="ln_pow"),
      helper.make_node("ReduceMean", ["d2"], ["var"], name="ln_var", axes=[-1]),
      helper.make_node("Add", ["var", "eps"], ["ve"], name="ln_add"),
      helper.make_node("Sqrt", ["ve"], ["sd"], name="ln_sqrt"),
      helper.make_node("Div", ["d", "sd"], ["n"], name="ln_div"),
      helper.make_node("Mul", ["n", "gamma"], ["ng"], name="ln_mul"),
      helper.make_node("Add", ["ng", "beta"], ["ln"], name="ln_out"),
      helper.make_node("Div", ["ln", "sqrt2"], ["g0"], name="gelu_div"),
      helper.make_node("Erf", ["g0"], ["g1"], name="gelu_erf"),
      helper.make_node("Add", ["g1", "one"], ["g2"], name="gelu_add"),
      helper.make_node("Mul", ["ln", "g2"], ["g3"], name="gelu_mul"),
      helper.make_node("Mul", ["g3", "half"], ["y"], name="gelu_out")],
     [vi("x", [2, 5, 8])], [vi("y", None)],
     [const("two", np.array(2, np.float32)), const("eps", np.array(1e-5, np.float32)),
      const("gamma", np.linspace(0.5, 1.5, 8).astype(np.float32)),
      const("beta", np.linspace(-1, 1, 8).astype(np.float32)),
      const("sqrt2", np.array(1.4142135, np.float32)), const("one", np.array(1, np.float32)),
      const("half", np.array(0.5, np.float32))])

# Mish: torch's export before opset 18 (Softplus, Tanh, Mul) and ONNX's own
# op (opset 18; written without the checker, which onnx 1.12 lacks it for).
save("mish",
     [helper.make_node("Softplus", ["x"], ["sp"], name="sp"),
      helper.make_node("Tanh", ["sp"], ["t"], name="t"),
      helper.make_node("Mul", ["x", "t"], ["m"], name="m"),
      helper.make_node("Mish", ["m"], ["y"], name="y")],
     [vi("x", [2, 5])], [vi("y", None)], opset=18)

# Truncated and garbage files.
data = open(os.path.join(out, "conv_bn_relu.onnx"), "rb").read()
open(os.path.join(out, "truncated.onnx"), "wb").write(data[: len(data) // 2])
open(os.path.join(out, "garbage.onnx"), "wb").write(b"\xff\xfe this is not a protobuf \x00\x01" * 4)
open(os.path.join(out, "empty.onnx"), "wb").write(b"")

"""Writes small ONNX models whose pads, slice bounds, reshape targets and resize
sizes/scales are computed from the input shapes (the subgraphs exporters emit
for dynamic dims), an NHWC-input detector, and one seeded input .npz per model,
into argv[1]. Every model's input dims are symbolic, so `tpuc import` needs
--input-shapes; the shapes here are the ones the .npz inputs have.

Run with /usr/bin/python3 (it has the onnx package). Deterministic.
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from onnx_writer import save_model  # noqa: E402

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(7)
N = helper.make_node


def save(name, nodes, inputs, inits=(), opset=13):
    """inputs: [(name, shape)]; the graph output is 'y'."""
    graph = helper.make_graph(nodes, name,
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, ["d%d" % i for i in range(len(s))])
                               for n, s in inputs],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              initializer=[numpy_helper.from_array(np.asarray(v), k) for k, v in inits])
    save_model(graph, os.path.join(out, name + ".onnx"), opset=opset)
    np.savez(os.path.join(out, name + "_in.npz"),
             **{n: rng.standard_normal(s).astype(np.float32) for n, s in inputs})


def i64(*v):
    return np.array(v, np.int64)


def dim(shape_of, axis, name):
    """Nodes computing dim `axis` of Shape(shape_of) as the 1-element tensor `name`."""
    return [N("Shape", [shape_of], [name + "_shape"]),
            N("Gather", [name + "_shape", "axis%d" % axis], [name + "_scalar"], axis=0),
            N("Unsqueeze", [name + "_scalar", "axes0"], [name])]


common = [("axis2", np.array(2, np.int64)), ("axis3", np.array(3, np.int64)), ("axes0", i64(0))]

# Pad H and W up to a multiple of 8: pad = (8 - d % 8) % 8 (torch's F.pad of a
# computed size): Shape -> Gather -> Mod/Sub/Mod -> Unsqueeze -> Concat -> Pad.
pad_nodes = dim("x", 2, "h") + dim("x", 3, "w")
for d in ("h", "w"):
    pad_nodes += [N("Mod", [d, "eight"], [d + "_rem"]), N("Sub", ["eight", d + "_rem"], [d + "_up"]),
                  N("Mod", [d + "_up", "eight"], [d + "_pad"])]
pad_nodes += [N("Concat", ["zeros6", "h_pad", "w_pad"], ["pads"], axis=0),
              N("Pad", ["x", "pads", "half"], ["y"], mode="constant")]
save("pad_to_multiple", pad_nodes, [("x", [1, 2, 5, 11])],
     common + [("eight", i64(8)), ("zeros6", i64(0, 0, 0, 0, 0, 0)), ("half", np.array(0.5, np.float32))])

# x.reshape(n, x.numel() // n) -> Softmax -> back: ReduceProd of a Shape slice.
save("flatten_numel",
     [N("Shape", ["x"], ["s"]),
      N("Slice", ["s", "one", "big"], ["tail"]),
      N("ReduceProd", ["tail"], ["numel"], keepdims=1),
      N("Slice", ["s", "zero", "one"], ["batch"]),
      N("Concat", ["batch", "numel"], ["target"], axis=0),
      N("Reshape", ["x", "target"], ["flat"]),
      N("Softmax", ["flat"], ["prob"], axis=1),
      N("Reshape", ["prob", "s"], ["y"])],
     [("x", [2, 3, 4, 5])], [("zero", i64(0)), ("one", i64(1)), ("big", i64(1 << 62))])

# Resize x to y's spatial size (sizes = Concat(Shape(x)[:2], Shape(y)[2:])),
# and again by scales = Shape(y) / Shape(x) computed in float.
save("resize_to_shape",
     [N("Shape", ["x"], ["sx"]), N("Shape", ["y_like"], ["sy"]),
      N("Slice", ["sx", "zero", "two"], ["nc"]), N("Slice", ["sy", "two", "four"], ["hw"]),
      N("Concat", ["nc", "hw"], ["sizes"], axis=0),
      N("Resize", ["x", "", "", "sizes"], ["by_sizes"], mode="nearest"),
      N("Cast", ["sx"], ["fx"], to=TensorProto.FLOAT), N("Cast", ["sy"], ["fy"], to=TensorProto.FLOAT),
      N("Div", ["fy", "fx"], ["scales"]),
      N("Resize", ["x", "", "scales"], ["by_scales"], mode="linear", coordinate_transformation_mode="half_pixel"),
      N("Add", ["by_sizes", "by_scales"], ["sum"]),
      N("Add", ["sum", "y_like"], ["y"])],
     [("x", [1, 2, 3, 4]), ("y_like", [1, 2, 6, 8])],
     [("zero", i64(0)), ("two", i64(2)), ("four", i64(4))])

# Slice bounds from the shape: the left half of W from start h-3 on H, with
# start clamped by Clip and the parts of a Split of the shape vector.
save("slice_from_shape",
     dim("x", 2, "h") + dim("x", 3, "w") +
     [N("Div", ["w", "two"], ["half_w"]),
      N("Sub", ["h", "three"], ["h_start_raw"]),
      N("Clip", ["h_start_raw", "zero_s", "two_s"], ["h_start"]),
      N("Shape", ["x"], ["s4"]),
      N("Split", ["s4", "split22"], ["s_nc", "s_hw"], axis=0),
      N("Concat", ["h_start", "zero"], ["starts"], axis=0),
      N("Concat", ["h", "half_w"], ["ends"], axis=0),
      N("Slice", ["x", "starts", "ends", "axes23"], ["cut"]),
      N("ReduceMax", ["s_nc"], ["c_max"], keepdims=1),
      N("Cast", ["c_max"], ["c_f"], to=TensorProto.FLOAT),
      N("Mul", ["cut", "c_f"], ["y"])],
     [("x", [1, 3, 7, 10])],
     common + [("two", i64(2)), ("three", i64(3)), ("zero", i64(0)), ("zero_s", np.array(0, np.int64)),
               ("two_s", np.array(2, np.int64)), ("split22", i64(2, 2)), ("axes23", i64(2, 3))])

# x * expand(a, where(shape == -1, 1, shape)) + range(W): the Expand target of
# torch's expand_as (ConstantOfShape, Mul, Equal, Where), Range over a dim.
save("expand_where",
     [N("Shape", ["x"], ["s"]), N("Shape", ["s"], ["rank"]),
      N("ConstantOfShape", ["rank"], ["ones"], value=numpy_helper.from_array(i64(1))),
      N("Mul", ["ones", "minus1"], ["minus_ones"]),
      N("Equal", ["s", "minus_ones"], ["is_open"]),
      N("Where", ["is_open", "ones", "s"], ["target"]),
      N("Expand", ["a", "target"], ["a_full"]),
      N("Mul", ["x", "a_full"], ["scaled"])] +
     dim("x", 3, "w") +
     [N("Squeeze", ["w", "axes0"], ["w_count"]),
      N("Range", ["zero_s", "w_count", "one_s"], ["idx"]),
      N("Cast", ["idx"], ["idx_f"], to=TensorProto.FLOAT),
      N("Add", ["scaled", "idx_f"], ["y"])],
     [("x", [2, 3, 4, 5])],
     common + [("minus1", np.array(-1, np.int64)), ("a", np.arange(3, dtype=np.float32).reshape(1, 3, 1, 1)),
               ("zero_s", np.array(0, np.int64)), ("one_s", np.array(1, np.int64))])

# Boolean and comparison logic on shape values choosing a reshape target:
# if H <= W and not (N == 1 and C == 1) then [N, C, H*W] else [N, C*H, W];
# Tile of a constant, CastLike to the input's type.
save("logic_on_shape",
     [N("Shape", ["x"], ["s"]),
      N("Gather", ["s", "i_h"], ["h"], axis=0), N("Gather", ["s", "i_w"], ["w"], axis=0),
      N("Gather", ["s", "i_n"], ["n"], axis=0), N("Gather", ["s", "i_c"], ["c"], axis=0),
      N("LessOrEqual", ["h", "w"], ["wide"]),
      N("Equal", ["n", "one"], ["n1"]), N("Equal", ["c", "one"], ["c1"]),
      N("And", ["n1", "c1"], ["single"]), N("Not", ["single"], ["many"]),
      N("And", ["wide", "many"], ["flat_hw"]),
      N("Mul", ["h", "w"], ["hw"]), N("Mul", ["c", "h"], ["ch"]),
      N("Concat", ["n", "c", "hw"], ["t1"], axis=0), N("Concat", ["n", "ch", "w"], ["t2"], axis=0),
      N("Where", ["flat_hw", "t1", "t2"], ["target"]),
      N("Reshape", ["x", "target"], ["flat"]),
      N("Tile", ["row", "reps"], ["tiled"]),
      N("CastLike", ["tiled", "x"], ["tiled_f"]),
      N("Add", ["flat", "tiled_f"], ["y"])],
     [("x", [2, 3, 4, 5])],
     [("i_n", i64(0)), ("i_c", i64(1)), ("i_h", i64(2)), ("i_w", i64(3)), ("one", i64(1)),
      ("row", np.arange(5, dtype=np.int64).reshape(1, 1, 5) - 2), ("reps", i64(1, 1, 4))], opset=15)

# An NHWC-input detector (BlazeFace's layout: 1xHxWx3, a Transpose first):
# strided conv, depthwise conv + residual with the channels zero-padded, pool,
# 1x1 head, back to NHWC and flattened to [1, anchors, values].
w = lambda *s: (rng.standard_normal(s) * 0.3).astype(np.float32)
save("nhwc_detector",
     [N("Transpose", ["x"], ["nchw"], perm=[0, 3, 1, 2]),
      N("Conv", ["nchw", "w1", "b1"], ["c1"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
      N("Relu", ["c1"], ["r1"]),
      N("Conv", ["r1", "w2", "b2"], ["c2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=4),
      N("Conv", ["c2", "w3", "b3"], ["c3"], kernel_shape=[1, 1]),
      N("Pad", ["r1", "channel_pads"], ["r1_wide"], mode="constant"),
      N("Add", ["c3", "r1_wide"], ["sum"]),
      N("Relu", ["sum"], ["r2"]),
      N("MaxPool", ["r2"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
      N("Conv", ["p", "w4", "b4"], ["head"], kernel_shape=[1, 1]),
      N("Transpose", ["head"], ["head_nhwc"], perm=[0, 2, 3, 1]),
      N("Reshape", ["head_nhwc", "anchors"], ["y"])],
     [("x", [1, 16, 16, 3])],
     [("w1", w(4, 3, 3, 3)), ("b1", w(4)), ("w2", w(4, 1, 3, 3)), ("b2", w(4)), ("w3", w(8, 4, 1, 1)), ("b3", w(8)),
      ("channel_pads", i64(0, 0, 0, 0, 0, 4, 0, 0)), ("w4", w(6, 8, 1, 1)), ("b4", w(6)),
      ("anchors", i64(1, -1, 3))], opset=12)

# Mod of the data itself (not foldable).
graph = helper.make_graph([N("Mod", ["x", "three"], ["y"], name="mod", fmod=1)], "mod_runtime",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
                          initializer=[numpy_helper.from_array(np.array([3.0], np.float32), "three")])
save_model(graph, os.path.join(out, "mod_runtime.onnx"))

# torch's AvgPool2d export: a Pad of all-zero pads before the AveragePool (the identity).
save("zero_pad_avgpool", [N("Pad", ["x", "zero_pads"], ["padded"], mode="constant"),
                          N("AveragePool", ["padded"], ["y"], kernel_shape=[2, 2], strides=[2, 2])],
     [("x", [1, 2, 4, 6])], [("zero_pads", i64(0, 0, 0, 0, 0, 0, 0, 0))])

"""A detector head ending as exports with NMS do: a conv gives per-anchor
boxes [x_center, y_center, w, h] and class scores, NonMaxSuppression keeps
rows [batch, class, box], Gathers pick the kept boxes and their classes, and
NonZero lists the anchors scoring above 0.9. How many rows NMS keeps and how
many NonZero finds comes from the data. DIR/tail.onnx applies torchvision
detectors' post-processing to the kept boxes instead.
Writes DIR/nms.onnx, two inputs DIR/nms_in.npz and DIR/nms_in2.npz, four
calibration samples in DIR/samples/, DIR/nms_add.onnx, where an Add (a chip
op, run on the host here) reads the NMS rows, DIR/nms_shape.onnx, which takes
their Shape, and DIR/nms_reshape.onnx, which flattens them (a Reshape to [-1]
on the host)."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from onnx_writer import save_model  # noqa: E402

out = sys.argv[1]
rng = np.random.default_rng(11)
C, A = 3, 64  # classes, anchors (8 x 8)
W = (rng.standard_normal((4 + C, 4, 1, 1)) * 0.8).astype(np.float32)
B = np.array([4, 4, 3, 3] + [0] * C, np.float32)
i64 = lambda name, v: numpy_helper.from_array(np.array(v, np.int64), name)
f32c = lambda name, v: numpy_helper.from_array(np.array(v, np.float32), name)
nodes = [
    helper.make_node("Conv", ["x", "W", "B"], ["head"]),
    helper.make_node("Reshape", ["head", "flat"], ["rows"]),          # [1, 4 + C, A]
    helper.make_node("Slice", ["rows", "s0", "s4", "s1"], ["xywh"]),   # [1, 4, A]
    helper.make_node("Transpose", ["xywh"], ["boxes"], perm=[0, 2, 1]),  # [1, A, 4]
    helper.make_node("Slice", ["rows", "s4", "s7", "s1"], ["logits"]),
    helper.make_node("Sigmoid", ["logits"], ["scores"]),               # [1, C, A]
    helper.make_node("NonMaxSuppression", ["boxes", "scores", "most", "iou", "min_score"], ["selected"],
                     center_point_box=1),
    helper.make_node("Gather", ["selected", "two"], ["box_index"], axis=1),
    helper.make_node("Gather", ["selected", "one"], ["classes"], axis=1),
    helper.make_node("Reshape", ["boxes", "flat_boxes"], ["all_boxes"]),  # [A, 4]
    helper.make_node("Gather", ["all_boxes", "box_index"], ["kept_boxes"], axis=0),
    helper.make_node("Sub", ["scores", "cut"], ["above"]),
    helper.make_node("Relu", ["above"], ["confident"]),
    helper.make_node("NonZero", ["confident"], ["confident_at"]),
]
I64 = TensorProto.INT64
graph = helper.make_graph(
    nodes, "nms", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
    [helper.make_tensor_value_info("selected", I64, ["rows", 3]),
     helper.make_tensor_value_info("classes", I64, ["rows"]),
     helper.make_tensor_value_info("kept_boxes", TensorProto.FLOAT, ["rows", 4]),
     helper.make_tensor_value_info("confident_at", I64, [3, "found"])],
    [numpy_helper.from_array(W, "W"), numpy_helper.from_array(B, "B"), i64("flat", [1, 4 + C, A]),
     i64("s0", [0]), i64("s4", [4]), i64("s7", [4 + C]), i64("s1", [1]), i64("most", [20]), f32c("iou", [0.4]),
     f32c("min_score", [0.3]), i64("two", 2), i64("one", 1), i64("flat_boxes", [A, 4]), f32c("cut", 0.9)])
save_model(graph, os.path.join(out, "nms.onnx"), ir_version=8, check=True)
for name in ("nms_in.npz", "nms_in2.npz"):
    np.savez(os.path.join(out, name), x=rng.standard_normal((1, 4, 8, 8)).astype(np.float32))
os.makedirs(os.path.join(out, "samples"), exist_ok=True)
for i in range(4):
    np.savez(os.path.join(out, "samples", f"s{i}.npz"), x=rng.standard_normal((1, 4, 8, 8)).astype(np.float32))

# The same head with an Add on the NMS rows instead of the Gathers.
bad = helper.make_graph(
    nodes[:7] + [helper.make_node("Add", ["selected", "one"], ["rows_plus_one"])], "nms_add", graph.input,
    [helper.make_tensor_value_info("rows_plus_one", I64, ["rows", 3])], graph.initializer)
save_model(bad, os.path.join(out, "nms_add.onnx"), ir_version=8)

# Shape of the NMS rows: known only at run time.
shape = helper.make_graph(
    nodes[:7] + [helper.make_node("Shape", ["selected"], ["rows_shape"])], "nms_shape", graph.input,
    [helper.make_tensor_value_info("rows_shape", I64, [2])], graph.initializer)
save_model(shape, os.path.join(out, "nms_shape.onnx"), ir_version=8)

# A Reshape of the NMS rows to [-1]: the -1 resolves on the real rows.
flat = helper.make_graph(
    nodes[:7] + [helper.make_node("Reshape", ["selected", "flat_shape"], ["rows_flat"])], "nms_reshape",
    graph.input, [helper.make_tensor_value_info("rows_flat", I64, ["n"])],
    list(graph.initializer) + [helper.make_tensor("flat_shape", I64, [1], [-1])])
save_model(flat, os.path.join(out, "nms_reshape.onnx"), ir_version=8)

# torchvision detectors' tail on the kept boxes (nodes 0..7, 9 and 10 keep them, [rows, 4]):
# Split and Flatten of them, TopK whose k is min(60, rows) from their Shape
# (RetinaNet's num_topk), Where on them, and the flattened boxes reshaped to
# their Shape (torchvision's clip_boxes_to_image).
tail_nodes = nodes[:8] + nodes[9:11] + [
    helper.make_node("Split", ["kept_boxes", "split"], ["first", "rest"], axis=1),    # [rows, 1], [rows, 3]
    helper.make_node("Flatten", ["kept_boxes"], ["flat_kept"], axis=0),               # [1, rows * 4]
    helper.make_node("Shape", ["kept_boxes"], ["kept_shape"]),
    helper.make_node("Slice", ["kept_shape", "s0", "s1", "s0"], ["kept_rows"]),
    helper.make_node("Concat", ["most_k", "kept_rows"], ["k_candidates"], axis=0),
    helper.make_node("ReduceMin", ["k_candidates"], ["k"], keepdims=1),
    helper.make_node("Squeeze", ["first", "s1"], ["first_col"]),                       # [rows]
    helper.make_node("TopK", ["first_col", "k"], ["top_values", "top_indices"], axis=0),
    helper.make_node("Greater", ["rest", "half"], ["big"]),
    helper.make_node("Where", ["big", "rest", "zero"], ["masked"]),
    helper.make_node("Reshape", ["flat_kept", "kept_shape"], ["unflat"]),            # back to [rows, 4]
]
tail = helper.make_graph(
    tail_nodes, "tail", graph.input,
    [helper.make_tensor_value_info("top_values", TensorProto.FLOAT, ["k"]),
     helper.make_tensor_value_info("top_indices", I64, ["k"]),
     helper.make_tensor_value_info("flat_kept", TensorProto.FLOAT, [1, "n"]),
     helper.make_tensor_value_info("masked", TensorProto.FLOAT, ["rows", 3]),
     helper.make_tensor_value_info("unflat", TensorProto.FLOAT, ["rows", 4])],
    list(graph.initializer) + [i64("split", [1, 3]), i64("most_k", [60]), f32c("half", 0.5), f32c("zero", 0.0)])
save_model(tail, os.path.join(out, "tail.onnx"), ir_version=8, check=True)

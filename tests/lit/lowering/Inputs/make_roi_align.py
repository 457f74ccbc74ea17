"""A two-stage detector's pooling: a conv gives a feature map at half the
image's resolution, RoiAlign pools boxes given in image coordinates (a graph
input, float) of images named by constant batch indices, in avg mode
(half_pixel, an adaptive sampling grid) and in max mode (output_half_pixel,
sampling_ratio 2), and a 1x1 conv reads the max-pooled features.
Writes DIR/roi_align.onnx, an input DIR/roi_in.npz and four calibration
samples in DIR/samples/; DIR/roi_only.onnx, the two RoiAlign on a feature
map given as input (DIR/roi_only_in.npz), whose results must equal
onnxruntime's bit for bit; and DIR/roi_bad.onnx, whose batch index 2 names
no image of the two."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from onnx_writer import save_model  # noqa: E402

out = sys.argv[1]
rng = np.random.default_rng(5)
N, C, F, R = 2, 4, 8, 5  # images, feature channels, feature map side, rois
W = (rng.standard_normal((C, 3, 3, 3)) * 0.4).astype(np.float32)
B = (rng.standard_normal(C) * 0.1).astype(np.float32)
W2 = (rng.standard_normal((2, C, 1, 1)) * 0.5).astype(np.float32)
nodes = [
    helper.make_node("Conv", ["x", "W", "B"], ["conv"], pads=[1, 1, 1, 1], strides=[2, 2]),
    helper.make_node("Relu", ["conv"], ["features"]),  # [N, C, 8, 8]
    helper.make_node("RoiAlign", ["features", "rois", "batch"], ["pooled_avg"], output_height=3, output_width=3,
                     spatial_scale=0.5),
    helper.make_node("RoiAlign", ["features", "rois", "batch"], ["pooled_max"], mode="max", output_height=2,
                     output_width=2, sampling_ratio=2, spatial_scale=0.5,
                     coordinate_transformation_mode="output_half_pixel"),
    helper.make_node("Conv", ["pooled_max", "W2"], ["head"]),
]
f32 = TensorProto.FLOAT
graph = helper.make_graph(
    nodes, "roi_align",
    [helper.make_tensor_value_info("x", f32, [N, 3, 2 * F, 2 * F]), helper.make_tensor_value_info("rois", f32, [R, 4])],
    [helper.make_tensor_value_info("pooled_avg", f32, [R, C, 3, 3]),
     helper.make_tensor_value_info("pooled_max", f32, [R, C, 2, 2]),
     helper.make_tensor_value_info("head", f32, [R, 2, 2, 2])],
    [numpy_helper.from_array(W, "W"), numpy_helper.from_array(B, "B"), numpy_helper.from_array(W2, "W2"),
     numpy_helper.from_array(np.array([0, 1, 1, 0, 1], np.int64), "batch")])
save_model(graph, os.path.join(out, "roi_align.onnx"), opset=16, ir_version=8, check=True)


def sample():
    # Boxes (x1, y1, x2, y2) in the 16x16 image, some reaching past its edge.
    xy = rng.uniform(-2, 12, (R, 2))
    wh = rng.uniform(1, 9, (R, 2))
    return {"x": rng.standard_normal((N, 3, 2 * F, 2 * F)).astype(np.float32),
            "rois": np.concatenate([xy, xy + wh], axis=1).astype(np.float32)}


np.savez(os.path.join(out, "roi_in.npz"), **sample())
os.makedirs(os.path.join(out, "samples"), exist_ok=True)
for i in range(4):
    np.savez(os.path.join(out, "samples", f"s{i}.npz"), **sample())


# The two RoiAlign alone, on the input's own features; and one whose batch
# index is out of range.
features = helper.make_tensor_value_info("features", f32, [N, C, F, F])
only = helper.make_graph(nodes[2:4], "roi_only", [features, graph.input[1]], graph.output[:2],
                         [numpy_helper.from_array(np.array([0, 1, 1, 0, 1], np.int64), "batch")])
bad = helper.make_graph(nodes[2:3], "roi_bad", [features, graph.input[1]], graph.output[:1],
                        [numpy_helper.from_array(np.array([0, 1, 2, 0, 1], np.int64), "batch")])
for g, name in ((only, "roi_only.onnx"), (bad, "roi_bad.onnx")):
    save_model(g, os.path.join(out, name), opset=16, ir_version=8, check=True)
s = sample()
np.savez(os.path.join(out, "roi_only_in.npz"), rois=s["rois"],
         features=rng.standard_normal((N, C, F, F)).astype(np.float32))

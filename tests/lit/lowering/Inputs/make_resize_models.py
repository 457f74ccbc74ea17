# Writes resize_net.onnx and its inputs x0..x2.npz in DIR. Six resizes of
# input x (2, 5, 9, 11), each an output: bilinear 2x (half_pixel) and 3x
# (pytorch_half_pixel), bilinear align_corners to 2x - 1 (17x21: every other
# output on an input pixel) and to 2x (18x22: no period), nearest by 2.5
# (asymmetric, floor), bilinear to the same size (a copy). And relu,
# bilinear 2x (half_pixel), relu of input z (1, 66, 96, 100): too large for
# one slice, in INT8 an fp32 island.
#   make_resize_models.py DIR
import os
import sys

import numpy as np
from onnx import TensorProto, helper
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from onnx_writer import save_model  # noqa: E402

out = sys.argv[1]
xs, zs = [2, 5, 9, 11], [1, 66, 96, 100]
resizes = [("y2", "linear", "half_pixel", [1, 1, 2, 2], None, [18, 22]),
           ("y3", "linear", "pytorch_half_pixel", [1, 1, 3, 3], None, [27, 33]),
           ("ya", "linear", "align_corners", None, [2, 5, 17, 21], [17, 21]),
           ("yb", "linear", "align_corners", None, [2, 5, 18, 22], [18, 22]),
           ("yn", "nearest", "asymmetric", [1, 1, 2.5, 2.5], None, [22, 27]),
           ("yi", "linear", "half_pixel", [1, 1, 1, 1], None, [9, 11])]
nodes, outputs = [], []
inits = [helper.make_tensor("two", TensorProto.FLOAT, [4], [1, 1, 2, 2])]
for name, mode, coord, scales, sizes, hw in resizes:
    if scales:
        inits.append(helper.make_tensor(f"{name}_scales", TensorProto.FLOAT, [4], scales))
        ins = ["x", "", f"{name}_scales"]
    else:
        inits.append(helper.make_tensor(f"{name}_sizes", TensorProto.INT64, [4], sizes))
        ins = ["x", "", "", f"{name}_sizes"]
    nodes.append(helper.make_node("Resize", ins, [name], mode=mode, coordinate_transformation_mode=coord,
                                  nearest_mode="floor"))
    outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, xs[:2] + hw))
nodes += [helper.make_node("Relu", ["z"], ["zr"]),
          helper.make_node("Resize", ["zr", "", "two"], ["zup"], mode="linear", coordinate_transformation_mode="half_pixel"),
          helper.make_node("Relu", ["zup"], ["yz"])]
outputs.append(helper.make_tensor_value_info("yz", TensorProto.FLOAT, [1, 66, 192, 200]))
inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, xs), helper.make_tensor_value_info("z", TensorProto.FLOAT, zs)]
graph = helper.make_graph(nodes, "resize_net", inputs, outputs, inits)
save_model(graph, os.path.join(out, "resize_net.onnx"))
rng = np.random.default_rng(5)
for i in range(3):
    np.savez(os.path.join(out, f"x{i}.npz"), x=rng.normal(size=xs).astype(np.float32),
             z=rng.normal(size=zs).astype(np.float32))

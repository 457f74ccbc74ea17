"""Writes the ONNX models of window_deploy.test into argv[1], with 8
calibration samples and a test input for each (fixed seed): windows the
BM1684 command fields cannot hold (pads above 15, dilation above 16, stride
above 15: kernel tap groups), grouped, depthwise and output-padded
transposed convolutions, 1-D ones, and Linear layers over an NHWC tensor.

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
rng = np.random.default_rng(5)


def weight(name, shape, scale=0.3):
    return numpy_helper.from_array(rng.normal(0, scale, shape).astype(np.float32), name)


def save(name, nodes, x_shape, outputs, inits):
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
                              initializer=inits)
    save_model(graph, os.path.join(out, name + ".onnx"))
    os.makedirs(os.path.join(out, name + "_samples"), exist_ok=True)
    for i in range(8):
        np.savez(os.path.join(out, name + "_samples", f"s{i}.npz"), x=rng.normal(0, 1, x_shape).astype(np.float32))
    np.savez(os.path.join(out, name + "_in.npz"), x=rng.normal(0, 1, x_shape).astype(np.float32))


def conv(name, x, w, **attrs):
    return helper.make_node("Conv", [x, w, w + "_b"], [name], name=name, **attrs)


# ASPP-like convs on a 20x20 map: dilation 17 (taps partly outside the
# input), dilation 24 (the outer taps never reach it: a 1x1 conv), a
# depthwise dilation 18, pads above 15; a stride-16 patch conv; grouped,
# depthwise and output-padded transposed convs.
save("windows",
     [conv("a1", "x", "w1", dilations=[17, 17], pads=[17, 17, 17, 17], kernel_shape=[3, 3]),
      conv("a2", "x", "w2", dilations=[24, 24], pads=[24, 24, 24, 24], kernel_shape=[3, 3]),
      conv("a3", "x", "w3", dilations=[18, 18], pads=[18, 18, 18, 18], kernel_shape=[3, 3], group=8),
      helper.make_node("Add", ["a1", "a2"], ["s1"], name="s1"),
      helper.make_node("Add", ["s1", "a3"], ["s2"], name="s2"),
      helper.make_node("Relu", ["s2"], ["s"], name="s"),
      conv("patch", "s", "w4", strides=[16, 16], kernel_shape=[4, 4]),
      helper.make_node("ConvTranspose", ["s", "w5"], ["up_g"], name="up_g", group=4, strides=[2, 2],
                       pads=[1, 1, 1, 1], kernel_shape=[4, 4]),
      helper.make_node("ConvTranspose", ["s", "w6", "w6_b"], ["up_dw"], name="up_dw", group=8, strides=[2, 2],
                       pads=[1, 1, 1, 1], kernel_shape=[4, 4]),
      helper.make_node("Add", ["up_g", "up_dw"], ["up"], name="up"),
      helper.make_node("ConvTranspose", ["s", "w7", "w7_b"], ["outpad"], name="outpad", strides=[3, 3],
                       output_padding=[2, 2], kernel_shape=[3, 3])],
     [1, 8, 20, 20], ["patch", "up", "outpad"],
     [weight("w1", (8, 8, 3, 3)), weight("w1_b", (8,)), weight("w2", (8, 8, 3, 3)), weight("w2_b", (8,)),
      weight("w3", (8, 1, 3, 3)), weight("w3_b", (8,)), weight("w4", (16, 8, 4, 4), 0.1), weight("w4_b", (16,)),
      weight("w5", (8, 2, 4, 4)), weight("w6", (8, 1, 4, 4)), weight("w6_b", (8,)), weight("w7", (8, 4, 3, 3)),
      weight("w7_b", (4,))])

# 1-D conv and transposed conv (N, C, L).
save("oned",
     [conv("c1", "x", "w1", pads=[1, 1], kernel_shape=[3]),
      helper.make_node("Relu", ["c1"], ["r1"], name="r1"),
      helper.make_node("ConvTranspose", ["r1", "w2", "w2_b"], ["up"], name="up", strides=[2], pads=[1, 1],
                       kernel_shape=[4])],
     [1, 4, 30], ["up"],
     [weight("w1", (6, 4, 3)), weight("w1_b", (6,)), weight("w2", (6, 3, 4)), weight("w2_b", (3,))])

# ConvNeXt's Linear layers: MatMul of an NHWC tensor by a 2-D weight.
save("linear",
     [helper.make_node("Transpose", ["x"], ["nhwc"], name="nhwc", perm=[0, 2, 3, 1]),
      helper.make_node("MatMul", ["nhwc", "w1"], ["m1"], name="m1"),
      helper.make_node("Add", ["m1", "b1"], ["fc1"], name="fc1"),
      helper.make_node("Relu", ["fc1"], ["r1"], name="r1"),
      helper.make_node("MatMul", ["r1", "w2"], ["fc2"], name="fc2"),
      helper.make_node("Transpose", ["fc2"], ["y"], name="y", perm=[0, 3, 1, 2])],
     [2, 8, 5, 6], ["y"],
     [weight("w1", (8, 24)), weight("b1", (24,)), weight("w2", (24, 8))])

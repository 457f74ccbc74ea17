# Writes se_net.onnx, a squeeze-and-excitation block over more channels than the BM1684X's 64 lanes: a 3x3
# conv to 72 channels, hard swish (an int8 table), a 3x3 depthwise conv, the channel means (ReduceMean, a
# GlobalAveragePool), a 1x1 conv, hard sigmoid (a table), the scale multiplied back, a 1x1 conv; and three
# random inputs x0..x2.npz in DIR.
#   make_se_net.py DIR
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(5)


def weight(name, *shape, scale=0.3):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


C = 72
inits = [weight("w0", C, 3, 3, 3), weight("b0", C, scale=0.1), weight("wd", C, 1, 3, 3), weight("bd", C, scale=0.1),
         weight("w1", 16, C, 1, 1, scale=0.2), weight("b1", 16, scale=0.1), weight("w2", C, 16, 1, 1),
         weight("b2", C, scale=0.1), weight("w3", 8, C, 1, 1, scale=0.1)]
nodes = [
    helper.make_node("Conv", ["x", "w0", "b0"], ["c0"], pads=[1, 1, 1, 1]),
    helper.make_node("HardSwish", ["c0"], ["h0"]),
    helper.make_node("Conv", ["h0", "wd", "bd"], ["dw"], pads=[1, 1, 1, 1], group=C),
    helper.make_node("Relu", ["dw"], ["r0"]),
    helper.make_node("ReduceMean", ["r0"], ["m"], axes=[2, 3], keepdims=1),
    helper.make_node("Conv", ["m", "w1", "b1"], ["f1"]),
    helper.make_node("Relu", ["f1"], ["r1"]),
    helper.make_node("Conv", ["r1", "w2", "b2"], ["f2"]),
    helper.make_node("HardSigmoid", ["f2"], ["s"], alpha=1.0 / 6, beta=0.5),
    helper.make_node("Mul", ["r0", "s"], ["se"]),
    helper.make_node("Conv", ["se", "w3"], ["y"]),
]
graph = helper.make_graph(nodes, "se_net", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 12, 12])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 12, 12])], inits)
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), os.path.join(out, "se_net.onnx"))
for i in range(3):
    np.savez(os.path.join(out, f"x{i}.npz"), x=rng.normal(size=(1, 3, 12, 12)).astype(np.float32))

"""Writes the small ONNX models the sweep tests compile (seconds each).

tiny.onnx: conv 4->8 3x3 + relu on 1x4x16x16; tiny_pool.onnx: conv 4->8
stride 2, max pool, conv 8->8 1x1 on 1x4x32x32. Usage: tiny_models.py DIR
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(path, nodes, inputs, outputs, weights):
    g = helper.make_graph(nodes, "tiny", inputs, outputs, weights)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)


def tensor(rng, name, shape):
    return numpy_helper.from_array((rng.standard_normal(shape) * 0.2).astype(np.float32), name)


def main(out):
    rng = np.random.default_rng(3)
    save(f"{out}/tiny.onnx",
         [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], name="conv"),
          helper.make_node("Relu", ["c"], ["y"], name="relu")],
         [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 16, 16])],
         [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 16, 16])],
         [tensor(rng, "w", (8, 4, 3, 3)), numpy_helper.from_array(np.zeros(8, np.float32), "b")])
    save(f"{out}/tiny_pool.onnx",
         [helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1], strides=[2, 2], name="conv1"),
          helper.make_node("MaxPool", ["c1"], ["p"], kernel_shape=[2, 2], strides=[2, 2], name="pool"),
          helper.make_node("Conv", ["p", "w2"], ["y"], name="conv2")],
         [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 32, 32])],
         [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 8, 8])],
         [tensor(rng, "w1", (8, 4, 3, 3)), tensor(rng, "w2", (8, 8, 1, 1))])


if __name__ == "__main__":
    main(sys.argv[1])

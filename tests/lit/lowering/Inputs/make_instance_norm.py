# Writes instance_norm.onnx and x.npz in DIR: InstanceNormalization of x
# (2, 4, 5, 6) with constant scale and bias (initializers), as a GroupNorm
# export feeds it.
#   make_instance_norm.py DIR
import os
import sys

import numpy as np
from onnx import TensorProto, helper
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from onnx_writer import save_model  # noqa: E402

out = sys.argv[1]
inits = [helper.make_tensor("scale", TensorProto.FLOAT, [4], [1.5, -0.5, 2.0, 1.0]),
         helper.make_tensor("bias", TensorProto.FLOAT, [4], [0.1, 0.2, -0.3, 0.0])]
graph = helper.make_graph([helper.make_node("InstanceNormalization", ["x", "scale", "bias"], ["y"], epsilon=1e-5)],
                          "instance_norm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4, 5, 6])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4, 5, 6])], inits)
save_model(graph, os.path.join(out, "instance_norm.onnx"))
np.savez(os.path.join(out, "x.npz"), x=np.random.default_rng(3).standard_normal((2, 4, 5, 6)).astype(np.float32))

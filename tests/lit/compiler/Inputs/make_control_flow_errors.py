"""make_control_flow_errors.py DIR: models the importer must refuse with one line, around If and
tensors whose shape comes from the data (NonZero's result):
  if_outputs.onnx  an If whose then_branch gives two outputs for a node with one
  if_shadow.onnx   an If whose branch names its output like a value of the enclosing graph
  nz_slice.onnx    a Slice of NonZero's result counted from the end (start -1)"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from onnx_writer import save_model  # noqa: E402

out = sys.argv[1]
F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def save(name, nodes, inputs, outputs, inits=()):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    save_model(graph, os.path.join(out, name + ".onnx"), ir_version=8)


def branch(name, nodes, outs):
    return helper.make_graph(nodes, name, [], [helper.make_tensor_value_info(o, F, [2]) for o in outs])


x = helper.make_tensor_value_info("x", F, [2])
cond = helper.make_tensor_value_info("c", B, [])
y = helper.make_tensor_value_info("y", F, [2])
neg = helper.make_node("Neg", ["x"], ["neg"])
# then_branch with two outputs, else_branch with one, for a node with one output.
save("if_outputs", [helper.make_node("If", ["c"], ["y"],
                                     then_branch=branch("t", [helper.make_node("Neg", ["x"], ["t1"]),
                                                              helper.make_node("Abs", ["x"], ["t2"])], ["t1", "t2"]),
                                     else_branch=branch("e", [helper.make_node("Abs", ["x"], ["e1"])], ["e1"]))],
     [x, cond], [y])
# A branch that rebinds 'neg', a value of the enclosing graph.
save("if_shadow", [neg, helper.make_node("If", ["c"], ["y"],
                                         then_branch=branch("t", [helper.make_node("Abs", ["x"], ["neg"])], ["neg"]),
                                         else_branch=branch("e", [helper.make_node("Abs", ["x"], ["e1"])], ["e1"]))],
     [x, cond], [y])
# The last row of NonZero's coordinates: a start counted from the end of a dim known only at run time.
save("nz_slice", [helper.make_node("NonZero", ["x"], ["nz"]),
                  helper.make_node("Slice", ["nz", "start", "end", "axis"], ["last"])],
     [x], [helper.make_tensor_value_info("last", I64, [1, None])],
     [numpy_helper.from_array(np.array([v], np.int64), n) for n, v in (("start", -1), ("end", 2**62), ("axis", 1))])

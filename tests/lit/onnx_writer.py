"""Writing the ONNX models of the lit tests' Inputs/make_*.py scripts: one place for the model wrapper.

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    from onnx_writer import save_model
"""
import onnx
from onnx import helper


def save_model(graph, path, opset=13, ir_version=None, check=False):
    """Writes `graph` to `path` as a model of the default domain at `opset`. `ir_version` pins the model's IR
    version (onnx's newest is past what onnxruntime-node reads); `check` runs the ONNX checker first."""
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    if ir_version is not None:
        model.ir_version = ir_version
    if check:
        onnx.checker.check_model(model)
    onnx.save(model, path)
    return model

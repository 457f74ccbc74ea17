#!/usr/bin/python3
"""Every operator of the TFLite importer on a small model of its own, through
`tpuc import` + the Top interpreter, against Arm NN 20.08 (tools/armnn) where
its parser takes the operator, and against the op-by-op NumPy reference
(tests/models/tflite_reference.py) always: cosine >= 0.9999 and max |diff| <=
1e-4 on every output.

    test_tflite_ops.py TPUC ARMNN_RUN ROOT

The models are written here as JSON and compiled with flatc and the importer's
schema. Odd sizes, strides, dilations, broadcasts and masks make a wrong
layout conversion visible. The summary lists the operators Arm NN refused.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tflite_reference  # noqa: E402  (the NumPy reference, run in this process)

TPUC, ARMNN, ROOT = sys.argv[1:4]
SCHEMA = os.path.join(ROOT, "compiler/Import/tflite/schema.fbs")
CODES = {"ADD": 0, "AVERAGE_POOL_2D": 1, "CONCATENATION": 2, "CONV_2D": 3, "DEPTHWISE_CONV_2D": 4,
         "FULLY_CONNECTED": 9, "LOGISTIC": 14, "MAX_POOL_2D": 17, "MUL": 18, "RELU": 19, "RELU6": 21,
         "RESHAPE": 22, "RESIZE_BILINEAR": 23, "SOFTMAX": 25, "TANH": 28, "CUSTOM": 32, "PAD": 34,
         "TRANSPOSE": 39, "MEAN": 40, "SUB": 41, "DIV": 42, "SQUEEZE": 43, "STRIDED_SLICE": 45, "SPLIT": 49,
         "PRELU": 54, "MAXIMUM": 55, "MINIMUM": 57, "PADV2": 60, "SLICE": 65, "TRANSPOSE_CONV": 67,
         "EXPAND_DIMS": 70, "SUM": 74, "REDUCE_MAX": 82, "RESIZE_NEAREST_NEIGHBOR": 97, "LEAKY_RELU": 98,
         "HARD_SWISH": 117}
RNG = np.random.default_rng(7)


class Model:
    """One subgraph: graph input 'x', constants, one operator, its outputs."""

    def __init__(self, shape):
        self.tensors, self.buffers, self.codes, self.ops = [], [{}], [], []
        self.x = self.tensor("x", shape)

    def tensor(self, name, shape, data=None, dtype="FLOAT32"):
        t = {"shape": list(shape), "type": dtype, "buffer": 0, "name": name}
        if data is not None:
            np_type = {"FLOAT32": np.float32, "INT32": np.int32}[dtype]
            t["buffer"] = len(self.buffers)
            self.buffers.append({"data": list(np.asarray(data, np_type).reshape(shape).tobytes())})
        self.tensors.append(t)
        return len(self.tensors) - 1

    def const(self, name, values, dtype="FLOAT32"):
        values = np.asarray(values)
        return self.tensor(name, values.shape, values, dtype)

    def ints(self, name, values):
        return self.const(name, np.asarray(values, np.int32), "INT32")

    def op(self, code, inputs, outputs, options_type=None, options=None, custom=None):
        key = (code, custom)
        if key not in self.codes:
            self.codes.append(key)
        op = {"opcode_index": self.codes.index(key), "inputs": inputs, "outputs": outputs}
        if options_type:
            op["builtin_options_type"], op["builtin_options"] = options_type, options or {}
        self.ops.append(op)

    def json(self, outputs):
        codes = []
        for code, custom in self.codes:
            c = {"deprecated_builtin_code": min(CODES[code], 127), "builtin_code": code}
            if custom:
                c["custom_code"] = custom[0]
            codes.append(c)
        for op, (code, custom) in zip(self.ops, [self.codes[o["opcode_index"]] for o in self.ops]):
            if custom:
                op["custom_options"] = list(custom[1])
        return {"version": 3, "operator_codes": codes, "buffers": self.buffers,
                "subgraphs": [{"tensors": self.tensors, "inputs": [self.x], "outputs": outputs,
                               "operators": self.ops, "name": "main"}]}


def rand(*shape):
    return RNG.uniform(-1, 1, shape).astype(np.float32)


def single(code, in_shape, out_shapes, consts=(), options_type=None, options=None, custom=None, activation_input=0):
    """A model: x (and constants, in order) -> one operator -> outputs."""
    m = Model(in_shape)
    inputs = []
    for c in consts:
        if c is None:
            inputs.append(m.x)
        elif isinstance(c, tuple):  # ("int", values)
            inputs.append(m.ints(f"c{len(inputs)}", c[1]))
        else:
            inputs.append(m.const(f"c{len(inputs)}", c))
    if not consts:
        inputs = [m.x]
    outs = [m.tensor(f"y{i}" if len(out_shapes) > 1 else "y", s) for i, s in enumerate(out_shapes)]
    m.op(code, inputs, outs, options_type, options, custom)
    return m, outs


def conv_opts(padding, stride, dilation=(1, 1), act="NONE", **extra):
    return dict(padding=padding, stride_h=stride[0], stride_w=stride[1], dilation_h_factor=dilation[0],
                dilation_w_factor=dilation[1], fused_activation_function=act, **extra)


def pool_opts(padding, k, s):
    return dict(padding=padding, filter_height=k[0], filter_width=k[1], stride_h=s[0], stride_w=s[1])


def cases():
    X = [1, 5, 6, 3]
    yield "CONV_2D same/stride 2/RELU6", single("CONV_2D", X, [[1, 3, 3, 4]], [None, rand(4, 3, 3, 3), rand(4)],
                                                "Conv2DOptions", conv_opts("SAME", (2, 2), act="RELU6"))
    yield "CONV_2D valid/dilation 2", single("CONV_2D", X, [[1, 3, 5, 2]], [None, rand(2, 2, 2, 3), rand(2)],
                                             "Conv2DOptions", conv_opts("VALID", (1, 1), (2, 1)))
    yield "CONV_2D valid/stride 1x2", single("CONV_2D", X, [[1, 3, 2, 4]], [None, rand(4, 3, 3, 3), rand(4)],
                                             "Conv2DOptions", conv_opts("VALID", (1, 2)))
    yield "DEPTHWISE_CONV_2D x2", single("DEPTHWISE_CONV_2D", X, [[1, 5, 6, 6]], [None, rand(1, 3, 3, 6), rand(6)],
                                         "DepthwiseConv2DOptions",
                                         dict(conv_opts("SAME", (1, 1), act="RELU"), depth_multiplier=2))
    m = Model(X)
    y = m.tensor("y", [1, 10, 12, 2])
    m.op("TRANSPOSE_CONV", [m.ints("shape", [1, 10, 12, 2]), m.const("w", rand(2, 3, 3, 3)), m.x], [y],
         "TransposeConvOptions", dict(padding="SAME", stride_h=2, stride_w=2))
    yield "TRANSPOSE_CONV same/stride 2", (m, [y])
    m = Model(X)
    y = m.tensor("y", [1, 11, 14, 2])
    m.op("TRANSPOSE_CONV", [m.ints("shape", [1, 11, 14, 2]), m.const("w", rand(2, 3, 4, 3)), m.x], [y],
         "TransposeConvOptions", dict(padding="VALID", stride_h=2, stride_w=2))
    yield "TRANSPOSE_CONV valid/stride 2", (m, [y])
    custom = ("Convolution2DTransposeBias", np.array([2, 2, 2], np.int32).tobytes())  # VALID, stride 2x2
    yield "Convolution2DTransposeBias", single("CUSTOM", X, [[1, 12, 14, 2]], [None, rand(2, 4, 4, 3), rand(2)],
                                               custom=custom)
    yield "FULLY_CONNECTED", single("FULLY_CONNECTED", X, [[1, 7]], [None, rand(7, 90), rand(7)],
                                    "FullyConnectedOptions", dict(fused_activation_function="RELU"))
    for code in ("ADD", "SUB", "MUL", "DIV", "MAXIMUM", "MINIMUM"):
        other = rand(3) + (2.0 if code == "DIV" else 0.0)
        options = {"ADD": "AddOptions", "SUB": "SubOptions", "MUL": "MulOptions", "DIV": "DivOptions"}.get(code)
        yield f"{code} broadcast [3]", single(code, X, [X], [None, other], options,
                                              {"fused_activation_function": "NONE"} if options else None)
    yield "ADD broadcast [5,1,1]/RELU", single("ADD", X, [X], [None, rand(5, 1, 1)], "AddOptions",
                                               {"fused_activation_function": "RELU"})
    yield "MAX_POOL_2D same 3x3/2", single("MAX_POOL_2D", X, [[1, 3, 3, 3]], [], "Pool2DOptions",
                                           pool_opts("SAME", (3, 3), (2, 2)))
    yield "AVERAGE_POOL_2D same 3x3/2", single("AVERAGE_POOL_2D", X, [[1, 3, 3, 3]], [], "Pool2DOptions",
                                               pool_opts("SAME", (3, 3), (2, 2)))
    yield "MEAN HW", single("MEAN", X, [[1, 3]], [None, ("int", [1, 2])], "ReducerOptions", {"keep_dims": False})
    yield "MEAN W keep", single("MEAN", X, [[1, 5, 1, 3]], [None, ("int", [2])], "ReducerOptions", {"keep_dims": True})
    yield "SUM C keep", single("SUM", X, [[1, 5, 6, 1]], [None, ("int", [3])], "ReducerOptions", {"keep_dims": True})
    yield "REDUCE_MAX H", single("REDUCE_MAX", X, [[1, 6, 3]], [None, ("int", [1])], "ReducerOptions",
                                 {"keep_dims": False})
    yield "PAD", single("PAD", X, [[1, 8, 7, 5]], [None, ("int", [[0, 0], [1, 2], [0, 1], [2, 0]])])
    m, outs = single("PADV2", X, [[1, 6, 8, 3]], [None, ("int", [[0, 0], [0, 1], [1, 1], [0, 0]]), np.array([0.5])])
    yield "PADV2 0.5", (m, outs)
    yield "RESHAPE [1,90]", single("RESHAPE", X, [[1, 90]], [None, ("int", [1, -1])])
    yield "RESHAPE [1,10,9]", single("RESHAPE", X, [[1, 10, 9]], [None, ("int", [1, 10, 9])])
    yield "SQUEEZE", single("SQUEEZE", [1, 5, 1, 3], [[1, 5, 3]], [], "SqueezeOptions", {"squeeze_dims": [2]})
    yield "EXPAND_DIMS to 4-D", single("EXPAND_DIMS", [1, 5, 3], [[1, 5, 1, 3]], [None, ("int", [2])])
    m = Model(X)
    r, y = m.tensor("r", X), m.tensor("y", [1, 5, 6, 6])
    m.op("RELU", [m.x], [r])
    m.op("CONCATENATION", [m.x, r], [y], "ConcatenationOptions", {"axis": -1})
    yield "CONCATENATION C", (m, [y])
    m = Model(X)
    r, y = m.tensor("r", X), m.tensor("y", [1, 5, 12, 3])
    m.op("RELU", [m.x], [r])
    m.op("CONCATENATION", [r, m.x], [y], "ConcatenationOptions", {"axis": 2})
    yield "CONCATENATION W", (m, [y])
    m = Model(X)
    outs = [m.tensor(f"y{i}", [1, 5, 2, 3]) for i in range(3)]
    m.op("SPLIT", [m.ints("axis", [2]), m.x], outs, "SplitOptions", {"num_splits": 3})
    yield "SPLIT W", (m, outs)
    yield "STRIDED_SLICE masks", single("STRIDED_SLICE", X, [[2, 6, 2]],
                                        [None, ("int", [0, 1, 5, 0]), ("int", [1, 4, 0, 3]), ("int", [1, 2, -1, 2])],
                                        "StridedSliceOptions",
                                        {"begin_mask": 4, "end_mask": 4, "shrink_axis_mask": 1})
    yield "SLICE", single("SLICE", X, [[1, 3, 5, 2]], [None, ("int", [0, 1, 1, 1]), ("int", [1, 3, -1, 2])])
    yield "SLICE sized", single("SLICE", X, [[1, 2, 3, 2]], [None, ("int", [0, 2, 1, 0]), ("int", [1, 2, 3, 2])])
    yield "TRANSPOSE", single("TRANSPOSE", X, [[1, 3, 5, 6]], [None, ("int", [0, 3, 1, 2])])
    yield "TRANSPOSE to 3-D", single("TRANSPOSE", [5, 6, 3], [[3, 5, 6]], [None, ("int", [2, 0, 1])])
    for flags in ({}, {"align_corners": True}, {"half_pixel_centers": True}):
        tag = "/".join(flags) or "default"
        yield f"RESIZE_NEAREST_NEIGHBOR {tag}", single("RESIZE_NEAREST_NEIGHBOR", X, [[1, 9, 13, 3]],
                                                       [None, ("int", [9, 13])], "ResizeNearestNeighborOptions", flags)
        yield f"RESIZE_BILINEAR {tag}", single("RESIZE_BILINEAR", X, [[1, 9, 13, 3]], [None, ("int", [9, 13])],
                                               "ResizeBilinearOptions", flags)
    yield "SOFTMAX beta 0.5", single("SOFTMAX", X, [X], [], "SoftmaxOptions", {"beta": 0.5})
    yield "SOFTMAX 2-D", single("SOFTMAX", [2, 7], [[2, 7]], [], "SoftmaxOptions", {"beta": 1.0})
    for code in ("LOGISTIC", "TANH", "RELU", "RELU6", "HARD_SWISH"):
        yield code, single(code, X, [X])
    yield "LEAKY_RELU 0.2", single("LEAKY_RELU", X, [X], [], "LeakyReluOptions", {"alpha": 0.2})
    yield "PRELU slope [1,1,3]", single("PRELU", X, [X], [None, rand(1, 1, 3)])


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    return r.returncode, (r.stderr or r.stdout).strip()


def close(ref_path, got_path):
    ref, got = np.load(ref_path), np.load(got_path)
    worst = 1.0
    for name in ref.files:
        a, b = ref[name].astype(np.float64), got[name].astype(np.float64)
        if a.shape != b.shape:
            return False, f"{name}: shape {b.shape}, expected {a.shape}"
        c = float(a.ravel() @ b.ravel() / (np.linalg.norm(a) * np.linalg.norm(b)))
        diff = float(np.abs(a - b).max())
        worst = min(worst, c)
        if c < 0.9999 or diff > 1e-4:
            return False, f"{name}: cosine {c:.6f} max|diff| {diff:.3g}"
    return True, f"cosine >= {worst:.6f}"


def main():
    ok, refused = True, []
    names = tflite_reference.builtin_names(SCHEMA)
    with tempfile.TemporaryDirectory() as tmp:
        for i, (label, (m, outs)) in enumerate(cases()):
            base = os.path.join(tmp, f"case{i}")
            with open(base + ".json", "w") as f:
                json.dump(m.json(outs), f)
            rc, err = run(["flatc", "-b", "-o", tmp, SCHEMA, base + ".json"])
            if rc != 0:
                print(f"FAIL {label}: flatc: {err}")
                return 1
            shape = m.tensors[m.x]["shape"]
            np.savez(base + "_in.npz", x=rand(*shape))
            reference = tflite_reference.run(tflite_reference.load_json(base + ".tflite", SCHEMA, "flatc"),
                                             dict(np.load(base + "_in.npz")), names)
            np.savez(base + "_np.npz", **reference)
            for cmd in ([TPUC, "import", base + ".tflite", "-o", base + ".top.mlir"],
                        [TPUC, "run", base + ".top.mlir", "-i", base + "_in.npz", "-o", base + "_top.npz"]):
                rc, err = run(cmd)
                if rc != 0:
                    print(f"FAIL {label}: tpuc {cmd[1]}: {err}")
                    ok = False
                    break
            else:
                good, why = close(base + "_np.npz", base + "_top.npz")
                line = f"{'ok  ' if good else 'FAIL'} {label}: NumPy {why}"
                ok &= good
                rc, err = run([ARMNN, base + ".tflite", base + "_in.npz", base + "_armnn.npz"])
                if rc == 0:
                    good, why = close(base + "_armnn.npz", base + "_top.npz")
                    line += f"; Arm NN {why}"
                    ok &= good
                else:
                    refused.append(label)
                    line += f"; Arm NN refuses: {err.split('error: ', 1)[-1][:110]}"
                print(line if good else "FAIL" + line[4:])
    print(f"Arm NN refused {len(refused)}: {', '.join(refused)}")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Op-by-op NumPy reference for TFLite models, in the model's own NHWC layout.

    tflite_reference.py model.tflite in.npz out.npz [--schema schema.fbs] [--flatc flatc]

The model is read through flatc (--json with the importer's schema,
compiler/Import/tflite/schema.fbs); every operator is evaluated in float64 from
TFLite's published kernel semantics (tensorflow/lite/kernels/internal/reference),
independently of the C++ importer: no layout conversion, no Top dialect.
It covers the operators of the MediaPipe models where Arm NN 20.08 cannot
stand in (RESIZE_BILINEAR with half_pixel_centers, the custom
Convolution2DTransposeBias). Errors: one line on stderr, exit code 2.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DTYPES = {"FLOAT32": np.float32, "FLOAT16": np.float16, "INT32": np.int32, "INT64": np.int64,
          "INT8": np.int8, "UINT8": np.uint8}


class UserError(Exception):
    pass


def builtin_names(schema):
    """BuiltinOperator value -> name, from the schema's enum."""
    import re
    with open(schema) as f:
        text = f.read()
    block = text[text.index("enum BuiltinOperator"):]
    block = block[:block.index("}")]
    return {int(v): n for n, v in re.findall(r"([A-Z0-9_]+) = (\d+)", block)}


def load_json(model, schema, flatc):
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run([flatc, "--json", "--raw-binary", "--strict-json", "--defaults-json", "-o", tmp, schema,
                            "--", model], capture_output=True, text=True)
        if r.returncode != 0:
            raise UserError(f"flatc cannot read {model}: {r.stderr.strip()}")
        name = os.path.splitext(os.path.basename(model))[0] + ".json"
        with open(os.path.join(tmp, name)) as f:
            return json.load(f)


def same_pads(n, k, s, d, padding):
    if padding == "VALID":
        return 0, 0
    out = -(-n // s)
    total = max(0, (out - 1) * s + (k - 1) * d + 1 - n)
    return total // 2, total - total // 2


def windows(x, kh, kw, s, d, padding, fill):
    """Yields (ky, kx, the strided input view under that tap) after TFLite padding."""
    _, h, w, _ = x.shape
    (pt, pb), (pl, pr) = same_pads(h, kh, s[0], d[0], padding), same_pads(w, kw, s[1], d[1], padding)
    xp = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)), constant_values=fill)
    oh = (h + pt + pb - (kh - 1) * d[0] - 1) // s[0] + 1
    ow = (w + pl + pr - (kw - 1) * d[1] - 1) // s[1] + 1
    for ky in range(kh):
        for kx in range(kw):
            y0, x0 = ky * d[0], kx * d[1]
            yield ky, kx, xp[:, y0:y0 + (oh - 1) * s[0] + 1:s[0], x0:x0 + (ow - 1) * s[1] + 1:s[1], :]


def activation(x, name):
    if name in (None, "NONE"):
        return x
    if name == "RELU":
        return np.maximum(x, 0)
    if name == "RELU6":
        return np.clip(x, 0, 6)
    if name == "RELU_N1_TO_1":
        return np.clip(x, -1, 1)
    if name == "TANH":
        return np.tanh(x)
    raise UserError(f"fused activation {name} is not covered")


def conv(x, w, b, o, depthwise):
    s, d = (o["stride_h"], o["stride_w"]), (o["dilation_h_factor"], o["dilation_w_factor"])
    kh, kw = w.shape[1], w.shape[2]
    if depthwise:  # filter [1, kh, kw, C * M]: output channel c * M + m reads input channel c
        x = np.repeat(x, w.shape[3] // x.shape[3], axis=3)
    out = None
    for ky, kx, view in windows(x, kh, kw, s, d, o["padding"], 0.0):
        term = view * w[0, ky, kx, :] if depthwise else np.einsum("nhwc,oc->nhwo", view, w[:, ky, kx, :])
        out = term if out is None else out + term
    if b is not None:
        out = out + b
    return activation(out, o["fused_activation_function"])


def pool(x, o, kind):
    s, k = (o["stride_h"], o["stride_w"]), (o["filter_height"], o["filter_width"])
    if kind == "max":
        out = None
        for _, _, view in windows(x, k[0], k[1], s, (1, 1), o["padding"], -np.inf):
            out = view if out is None else np.maximum(out, view)
    else:  # the average of the valid (unpadded) elements
        total = count = None
        ones = np.ones_like(x)
        for (_, _, view), (_, _, valid) in zip(windows(x, k[0], k[1], s, (1, 1), o["padding"], 0.0),
                                               windows(ones, k[0], k[1], s, (1, 1), o["padding"], 0.0)):
            total = view if total is None else total + view
            count = valid if count is None else count + valid
        out = total / count
    return activation(out, o["fused_activation_function"])


def transpose_conv(x, w, b, out_shape, padding, s):
    """Scatter of every input pixel through the OHWI filter, cropped TFLite-style."""
    n, h, wd, _ = x.shape
    kh, kw = w.shape[1], w.shape[2]
    full = np.zeros((n, (h - 1) * s[0] + kh, (wd - 1) * s[1] + kw, w.shape[0]))
    for ky in range(kh):
        for kx in range(kw):
            full[:, ky:ky + (h - 1) * s[0] + 1:s[0], kx:kx + (wd - 1) * s[1] + 1:s[1], :] += \
                np.einsum("nhwc,oc->nhwo", x, w[:, ky, kx, :])
    oh, ow = out_shape[1], out_shape[2]
    top = max(0, full.shape[1] - oh) // 2 if padding == "SAME" else 0
    left = max(0, full.shape[2] - ow) // 2 if padding == "SAME" else 0
    full = np.pad(full, ((0, 0), (0, max(0, oh - full.shape[1])), (0, max(0, ow - full.shape[2])), (0, 0)))
    out = full[:, top:top + oh, left:left + ow, :]
    return out + b if b is not None else out


def resize_nearest(x, size, o):
    _, h, w, _ = x.shape

    def index(n_out, n_in):
        scale = (n_in - 1) / (n_out - 1) if o["align_corners"] and n_out > 1 else n_in / n_out
        src = np.arange(n_out) * scale
        if o["half_pixel_centers"]:
            src = (np.arange(n_out) + 0.5) * scale
        # align_corners rounds half away from zero, the other modes take the floor
        src = np.floor(src + 0.5) if o["align_corners"] else np.floor(src)
        return np.minimum(src.astype(int), n_in - 1)

    return x[:, index(size[0], h)][:, :, index(size[1], w)]


def strided_slice(x, begin, end, strides, o):
    index = []
    for d in range(x.ndim):
        b, e, s = int(begin[d]), int(end[d]), int(strides[d])
        if o["shrink_axis_mask"] >> d & 1:
            index.append(b)
            continue
        index.append(slice(None if o["begin_mask"] >> d & 1 else b, None if o["end_mask"] >> d & 1 else e, s))
    return x[tuple(index)]


def resize_bilinear(x, size, o):
    _, h, w, _ = x.shape
    oh, ow = size

    def coords(n_out, n_in):
        if o["align_corners"] and n_out > 1:
            src = np.arange(n_out) * (n_in - 1) / (n_out - 1)
        elif o["half_pixel_centers"]:
            src = (np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5
        else:
            src = np.arange(n_out) * (n_in / n_out)
        lo = np.floor(src)
        frac = src - lo
        return (np.clip(lo, 0, n_in - 1).astype(int), np.clip(np.ceil(src), 0, n_in - 1).astype(int), frac)

    y0, y1, fy = coords(oh, h)
    x0, x1, fx = coords(ow, w)
    fy, fx = fy[None, :, None, None], fx[None, None, :, None]
    top = x[:, y0][:, :, x0] * (1 - fx) + x[:, y0][:, :, x1] * fx
    bottom = x[:, y1][:, :, x0] * (1 - fx) + x[:, y1][:, :, x1] * fx
    return top * (1 - fy) + bottom * fy


def run(model, inputs, names):
    graph = model["subgraphs"][0]
    tensors, buffers = graph["tensors"], model["buffers"]
    values = {}

    def const(i):
        t = tensors[i]
        data = buffers[t.get("buffer", 0)].get("data")
        if not data:
            return None
        return np.frombuffer(bytes(data), DTYPES[t.get("type", "FLOAT32")]).reshape(t.get("shape", []))

    def get(i):
        if i < 0:
            return None
        if i not in values:
            c = const(i)
            if c is None:
                raise UserError(f"tensor {tensors[i]['name']} is used before it is produced")
            values[i] = c.astype(np.float64) if c.dtype.kind == "f" else c
        return values[i]

    for i in graph["inputs"]:
        name = tensors[i]["name"]
        if name not in inputs:
            raise UserError(f"input '{name}' is missing from the input npz")
        values[i] = inputs[name].astype(np.float64)
    for index, op in enumerate(graph["operators"]):
        code = model["operator_codes"][op.get("opcode_index", 0)]
        # TFLite's rule: the larger of the old byte code and the int32 code.
        builtin = code.get("builtin_code", "ADD")
        value = max(code.get("deprecated_builtin_code", 0),
                    next(v for v, n in names.items() if n == builtin) if isinstance(builtin, str) else builtin)
        name = names.get(value, str(value))
        o = op.get("builtin_options", {})
        ins = op.get("inputs", [])
        args = [get(i) for i in ins]
        act = o.get("fused_activation_function")
        if name == "CONV_2D":
            out = conv(args[0], args[1], args[2] if len(args) > 2 else None, o, False)
        elif name == "DEPTHWISE_CONV_2D":
            out = conv(args[0], args[1], args[2] if len(args) > 2 else None, o, True)
        elif name in ("ADD", "MUL", "SUB", "DIV", "MAXIMUM", "MINIMUM"):
            f = {"ADD": np.add, "MUL": np.multiply, "SUB": np.subtract, "DIV": np.divide, "MAXIMUM": np.maximum,
                 "MINIMUM": np.minimum}[name]
            out = activation(f(args[0], args[1]), act)
        elif name == "RELU":
            out = np.maximum(args[0], 0)
        elif name == "RELU6":
            out = np.clip(args[0], 0, 6)
        elif name == "TANH":
            out = np.tanh(args[0])
        elif name == "LEAKY_RELU":
            out = np.where(args[0] >= 0, args[0], o["alpha"] * args[0])
        elif name == "PRELU":
            out = np.where(args[0] >= 0, args[0], args[1] * args[0])
        elif name == "SOFTMAX":
            z = o["beta"] * args[0]
            z = np.exp(z - z.max(axis=-1, keepdims=True))
            out = z / z.sum(axis=-1, keepdims=True)
        elif name == "FULLY_CONNECTED":
            k = args[1].shape[1]
            out = args[0].reshape(-1, k) @ args[1].T
            if len(args) > 2 and args[2] is not None:
                out = out + args[2]
            if o["keep_num_dims"]:
                out = out.reshape(args[0].shape[:-1] + (args[1].shape[0],))
            out = activation(out, act)
        elif name in ("MEAN", "SUM", "REDUCE_MAX"):
            f = {"MEAN": np.mean, "SUM": np.sum, "REDUCE_MAX": np.max}[name]
            out = f(args[0], axis=tuple(int(a) for a in args[1].reshape(-1)), keepdims=o["keep_dims"])
        elif name == "SQUEEZE":
            out = np.squeeze(args[0], axis=tuple(o["squeeze_dims"]) or None)
        elif name == "EXPAND_DIMS":
            out = np.expand_dims(args[0], int(args[1].reshape(-1)[0]))
        elif name == "SPLIT":
            pieces = np.split(args[1], o["num_splits"], axis=int(args[0].reshape(-1)[0]))
            for t, piece in zip(op["outputs"], pieces):
                values[t] = piece
            continue
        elif name == "STRIDED_SLICE":
            out = strided_slice(args[0], args[1], args[2], args[3], o)
        elif name == "SLICE":
            out = args[0][tuple(slice(int(b), None if int(n) < 0 else int(b) + int(n)) for b, n in zip(args[1], args[2]))]
        elif name == "TRANSPOSE":
            out = np.transpose(args[0], [int(p) for p in args[1]])
        elif name == "RESIZE_NEAREST_NEIGHBOR":
            out = resize_nearest(args[0], [int(v) for v in args[1]], o)
        elif name == "TRANSPOSE_CONV":
            out = transpose_conv(args[2], args[1], args[3] if len(args) > 3 else None, [int(v) for v in args[0]],
                                 o["padding"], (o["stride_h"], o["stride_w"]))
        elif name == "HARD_SWISH":
            out = args[0] * np.clip(args[0] + 3, 0, 6) / 6
        elif name == "LOGISTIC":
            out = 1 / (1 + np.exp(-args[0]))
        elif name in ("PAD", "PADV2"):
            value = float(args[2].reshape(-1)[0]) if len(args) > 2 else 0.0
            out = np.pad(args[0], args[1].reshape(-1, 2), constant_values=value)
        elif name == "MAX_POOL_2D":
            out = pool(args[0], o, "max")
        elif name == "AVERAGE_POOL_2D":
            out = pool(args[0], o, "avg")
        elif name == "RESHAPE":
            shape = args[1] if len(args) > 1 and args[1] is not None else o["new_shape"]
            out = args[0].reshape([int(d) for d in shape])
        elif name == "CONCATENATION":
            out = activation(np.concatenate(args, axis=o["axis"]), act)
        elif name == "DEQUANTIZE":
            out = args[0].astype(np.float64)
        elif name == "RESIZE_BILINEAR":
            out = resize_bilinear(args[0], [int(v) for v in args[1]], o)
        elif name == "CUSTOM" and code.get("custom_code") == "Convolution2DTransposeBias":
            padding, stride_w, stride_h = np.frombuffer(bytes(op["custom_options"]), np.int32)[:3]
            out = transpose_conv(args[0], args[1], args[2], tensors[op["outputs"][0]]["shape"],
                                 "SAME" if padding == 1 else "VALID", (int(stride_h), int(stride_w)))
        else:
            raise UserError(f"operator {index} ({name} {code.get('custom_code', '')}) is not covered")
        values[op["outputs"][0]] = out
    return {tensors[i]["name"]: values[i].astype(np.float32) for i in graph["outputs"]}


def main(argv):
    import argparse
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model")
    p.add_argument("inputs")
    p.add_argument("outputs")
    p.add_argument("--schema", default=os.path.join(ROOT, "compiler/Import/tflite/schema.fbs"))
    p.add_argument("--flatc", default="flatc")
    a = p.parse_args(argv)
    try:
        with np.load(a.inputs) as f:
            inputs = {k: f[k] for k in f.files}
        outputs = run(load_json(a.model, a.schema, a.flatc), inputs, builtin_names(a.schema))
        np.savez(a.outputs, **outputs)
    except (UserError, OSError, KeyError, ValueError) as e:
        print(f"tflite_reference: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

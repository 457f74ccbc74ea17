#!/usr/bin/python3
"""How close can any BM1684-style INT8 compilation come to the fp32 output? A fake-quant ablation.

    /usr/bin/python3 models/quant_headroom.py model.onnx model.cali in.npz [--tpu tpu_out.npz]
        [--tpu-module model_int8.tpu.mlir]

Runs the ONNX model in fp32 with torch, then again with int8 rounding applied to
more and more of it, and prints the cosine of each run's output against the fp32 one:

  input only          only the input tensor rounded to int8 (its calibrated scale)
  activations         every calibrated tensor rounded (symmetric, threshold/127 or
                      /255 when the tensor is never negative), weights in fp32
  + weights           conv/fc weights rounded as BM1684 requantises: one power-of-two
                      right shift per layer (scale_in / scale_out * 2^rshift), bias exact
  + int16 bias        as the chip: the shift must also fit the bias in int16
                      (what `tpuc deploy --quantize INT8` emits)

Each row is an upper bound for the rows below it. When "input only" or
"activations" is already far below a target, no choice of thresholds, shifts or
rounding in the compiler reaches it: the model itself amplifies small
perturbations (typical of randomly initialised deep networks, docs/quantization.md).
With --spread N the activations row is repeated N times with every tensor
scaled by about one ulp before it is rounded: a deep network's bound moves
by more than the kernels' fp32 differences would suggest (a flipped
rounding propagates), and the range says how far (PP-OCRv4 det: about
+-0.0009, docs/quantization.md).
With --tpu, the Tpu interpreter's output (`tpuc run model_int8.tpu.mlir`) is compared
too, which checks that the last row models the compiler faithfully.

Without --tpu-module every tensor of the calibration table is rounded, also
those the lowering never holds in int8 (the insides of a hard-swish, the
scalar affines folded into a lookup table): an upper bound on what
activations cost that is too low. With --tpu-module, the activation rows
round exactly the tensors that module holds in int8 (by name, at its scales
and signedness), as the chip does.

Supported ops: Conv, ConvTranspose, Gemm, Relu, Clip, Sigmoid, HardSigmoid, Add,
Mul, Div, BatchNormalization, MaxPool, GlobalAveragePool, Flatten, Resize
(nearest), Concat, Constant (the torchvision CNNs and PP-OCRv4 det). Tensors
that the compiler fuses away (not in the calibration table) stay fp32, as on
the chip. Exit 2 with one line on bad input.
"""
import argparse
import sys

import numpy as np


def fail(msg):
    print(f"quant_headroom: error: {msg}", file=sys.stderr)
    sys.exit(2)


def read_table(path):
    table = {}
    try:
        lines = open(path).read().splitlines()
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    for no, line in enumerate(lines, 1):
        line = line.split("#", 1)[0].split()
        if not line:
            continue
        if len(line) != 4:
            fail(f"{path}:{no}: expected 'name threshold min max', got {len(line)} fields")
        try:
            threshold, lo = float(line[1]), float(line[2])
        except ValueError:
            fail(f"{path}:{no}: threshold and min must be numbers")
        if not threshold > 0:
            fail(f"{path}:{no}: threshold of '{line[0]}' must be > 0")
        table[line[0]] = (threshold, lo)
    return table


def read_tpu_module(path):
    """The int8 activations of a Tpu module: name -> (scale, unsigned), from the result types and locations."""
    import re
    try:
        text = open(path).read()
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    locs = dict(re.findall(r'^(#loc\d+) = loc\("([^"]*)"\)', text, re.M))
    tensors = {}
    for kind, scale, loc in re.findall(r'-> tensor<[^>]*x(u?i8), ([0-9.e+-]+) : f32> loc\((#loc\d+|"[^"]*")\)', text):
        name = locs.get(loc, loc.strip('"'))
        tensors[name[:-3] if name.endswith("_i8") else name] = (float(scale), kind == "ui8")
    if not tensors:
        fail(f"{path}: no int8 tensor (is it an INT8 Tpu module written by tpuc deploy?)")
    return tensors


def scale_of(table, name):
    threshold, lo = table[name]
    return threshold / (255.0 if lo >= 0 else 127.0)


def first_shift(value, limit):
    """The largest right shift r in [0, 31] with round(value * 2^r) <= limit (None if none)."""
    for r in range(31, -1, -1):
        if round(value * 2.0 ** r) <= limit:
            return r
    return None


class Runner:
    ROWS = ("input only", "activations", "+ weights", "+ int16 bias")

    def __init__(self, torch, graph, numpy_helper, table, chip=None):
        self.torch, self.g, self.table, self.chip = torch, graph, table, chip
        self.weights = {i.name: torch.tensor(numpy_helper.to_array(i).copy()) for i in graph.initializer}
        self.consumers = {}
        for n in graph.node:
            for i in n.input:
                self.consumers.setdefault(i, []).append(n)
        self.numpy_helper = numpy_helper
        self.jitter = 0.0  # relative change of each tensor before it is rounded (--spread)

    def out_name(self, name):
        """The calibrated tensor a conv writes: fused activations carry the name."""
        while name not in self.table and len(self.consumers.get(name, [])) == 1:
            nxt = self.consumers[name][0]
            if nxt.op_type not in ("Relu", "Clip"):
                break
            name = nxt.output[0]
        if name not in self.table:
            fail(f"the calibration table has no threshold for '{name}'")
        return name

    def act(self, level, name, x):
        quantized = self.chip if self.chip is not None else self.table
        if level < 0 or name not in quantized or (level == 0 and name != self.g.input[0].name):
            return x
        if self.chip is not None:
            s, unsigned = self.chip[name]
        else:
            s, unsigned = scale_of(self.table, name), self.table[name][1] >= 0
        if self.jitter:
            x = x * (1 + self.jitter)
        return self.torch.clamp(self.torch.round(x / s), 0 if unsigned else -128, 255 if unsigned else 127) * s

    def layer(self, level, w, bias, in_name, out_name):
        """Weights and bias as the chip sees them at this ablation level."""
        if level < 2:
            return w, bias
        if in_name not in self.table:
            fail(f"the calibration table has no threshold for '{in_name}'")
        k = scale_of(self.table, in_name) / scale_of(self.table, out_name)
        r = first_shift(float(w.abs().max()) * k, 127)
        if r is not None and level >= 3 and bias is not None:
            rb = first_shift(float(bias.abs().max()) / scale_of(self.table, out_name), 32767)
            r = None if rb is None else min(r, rb)
        if r is None:  # the compiler keeps this layer in fp32
            return w, bias
        step = 1.0 / (k * 2.0 ** r)
        w = self.torch.clamp(self.torch.round(w / step), -128, 127) * step
        if level >= 3 and bias is not None:
            bstep = scale_of(self.table, out_name) / 2.0 ** r
            bias = self.torch.round(bias / bstep) * bstep
        return w, bias

    def run(self, x, level):
        F, torch = self.torch.nn.functional, self.torch
        name = self.g.input[0].name
        values = {name: self.act(level, name, x)}

        def attr(node, key, default=None):
            for a in node.attribute:
                if a.name == key:
                    import onnx
                    return onnx.helper.get_attribute_value(a)
            return default

        for n in self.g.node:
            ins = [values[i] if i in values else self.weights.get(i) for i in n.input]
            out, op = n.output[0], n.op_type
            if op == "Constant":
                values[out] = torch.tensor(self.numpy_helper.to_array(n.attribute[0].t).copy())
                continue
            if op == "Conv":
                pads = attr(n, "pads", [0, 0, 0, 0])
                if pads[0] != pads[2] or pads[1] != pads[3]:
                    fail(f"{out}: asymmetric conv padding is not supported")
                w, b = self.layer(level, ins[1], ins[2] if len(ins) > 2 else None, n.input[0], self.out_name(out))
                y = F.conv2d(ins[0], w, b, attr(n, "strides", [1, 1]), (pads[0], pads[1]),
                             attr(n, "dilations", [1, 1]), attr(n, "group", 1))
            elif op == "Gemm":
                if attr(n, "transB", 0) != 1 or attr(n, "alpha", 1.0) != 1.0 or attr(n, "beta", 1.0) != 1.0:
                    fail(f"{out}: only Gemm with transB=1, alpha=beta=1 is supported")
                w, b = self.layer(level, ins[1], ins[2] if len(ins) > 2 else None, n.input[0], self.out_name(out))
                y = ins[0] @ w.T + (b if b is not None else 0)
            elif op == "ConvTranspose":
                pads = attr(n, "pads", [0, 0, 0, 0])
                if pads[0] != pads[2] or pads[1] != pads[3] or any(attr(n, "output_padding", [0, 0])):
                    fail(f"{out}: only symmetric padding and no output_padding in ConvTranspose")
                y = F.conv_transpose2d(ins[0], ins[1], ins[2] if len(ins) > 2 else None, attr(n, "strides", [1, 1]),
                                       (pads[0], pads[1]), 0, attr(n, "group", 1), attr(n, "dilations", [1, 1]))
            elif op == "Relu":
                y = F.relu(ins[0])
            elif op == "Clip":
                lo = float(ins[1]) if len(ins) > 1 and ins[1] is not None else attr(n, "min", -float("inf"))
                hi = float(ins[2]) if len(ins) > 2 and ins[2] is not None else attr(n, "max", float("inf"))
                y = torch.clamp(ins[0], lo, hi)
            elif op == "Sigmoid":
                y = torch.sigmoid(ins[0])
            elif op == "HardSigmoid":
                y = torch.clamp(attr(n, "alpha", 0.2) * ins[0] + attr(n, "beta", 0.5), 0, 1)
            elif op == "Add":
                y = ins[0] + ins[1]
            elif op == "Mul":
                y = ins[0] * ins[1]
            elif op == "Div":
                y = ins[0] / ins[1]
            elif op == "BatchNormalization":
                x, scale, bias, mean, var = ins[:5]
                shape = (1, -1, 1, 1)
                y = (x - mean.reshape(shape)) / torch.sqrt(var.reshape(shape) + attr(n, "epsilon", 1e-5)) \
                    * scale.reshape(shape) + bias.reshape(shape)
            elif op == "Resize":
                if attr(n, "mode", b"nearest") not in (b"nearest", "nearest"):
                    fail(f"{out}: only nearest Resize is supported")
                scales = ins[2] if len(ins) > 2 and ins[2] is not None and ins[2].numel() else None
                if scales is None:
                    fail(f"{out}: Resize needs constant scales")
                y = F.interpolate(ins[0], scale_factor=(float(scales[2]), float(scales[3])), mode="nearest")
            elif op == "Concat":
                y = torch.cat(ins, attr(n, "axis", 1))
            elif op == "MaxPool":
                pads = attr(n, "pads", [0, 0, 0, 0])
                y = F.max_pool2d(ins[0], attr(n, "kernel_shape"), attr(n, "strides"), (pads[0], pads[1]))
            elif op == "GlobalAveragePool":
                y = ins[0].mean((2, 3), keepdim=True)
            elif op == "Flatten":
                y = ins[0].flatten(1)
            else:
                fail(f"node '{out}': op {op} is not supported by this ablation")
            values[out] = self.act(level, out, y)
        return values[self.g.output[0].name].double().flatten().numpy()


def cosine(a, b):
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-30))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("model")
    p.add_argument("calibration_table")
    p.add_argument("input", help="npz with the model's one input")
    p.add_argument("--tpu", help="npz with the Tpu interpreter's output of the same input")
    p.add_argument("--tpu-module", help="INT8 Tpu module (tpuc deploy): round only the activations it holds in int8")
    p.add_argument("--spread", type=int, default=0, metavar="N",
                   help="also run the activations row N more times, each tensor scaled by 1 + k * 1e-7 "
                        "(k = +-1, +-2, ...: about one ulp) before it is rounded, and print the range: how much "
                        "the bound depends on fp32 rounding details (other kernels give another value in it)")
    args = p.parse_args()
    if args.spread < 0 or args.spread > 100:
        fail("--spread must be between 0 and 100")
    try:
        import onnx
        import torch
        from onnx import numpy_helper
    except ImportError as e:
        fail(f"needs torch and onnx (/usr/bin/python3): {e}")
    try:
        graph = onnx.load(args.model).graph
    except Exception as e:  # onnx raises several types for a bad file
        fail(f"{args.model}: not a readable ONNX model ({e})")
    if len(graph.input) != 1 or len(graph.output) != 1:
        fail(f"{args.model}: expected one input and one output")
    table = read_table(args.calibration_table)
    try:
        arrays = np.load(args.input)
        x = arrays[graph.input[0].name]
    except (OSError, ValueError) as e:
        fail(f"{args.input}: {e}")
    except KeyError:
        fail(f"{args.input}: no array named '{graph.input[0].name}' (the model's input)")
    torch.set_num_threads(2)
    runner = Runner(torch, graph, numpy_helper, table, read_tpu_module(args.tpu_module) if args.tpu_module else None)
    with torch.no_grad():
        ref = runner.run(torch.tensor(np.asarray(x, np.float32)), -1)
        rows = [(label, cosine(ref, runner.run(torch.tensor(np.asarray(x, np.float32)), level)))
                for level, label in enumerate(Runner.ROWS)]
        if args.spread:
            spread = []
            for k in range(args.spread):
                runner.jitter = (k // 2 + 1) * (1e-7 if k % 2 == 0 else -1e-7)
                spread.append(cosine(ref, runner.run(torch.tensor(np.asarray(x, np.float32)), 1)))
            runner.jitter = 0.0
            rows.append((f"activations, {args.spread} one-ulp variants: min", min(spread)))
            rows.append((f"activations, {args.spread} one-ulp variants: max", max(spread)))
    if args.tpu:
        try:
            tpu = np.load(args.tpu)[graph.output[0].name].astype(np.float64).flatten()
        except (OSError, ValueError, KeyError) as e:
            fail(f"{args.tpu}: no readable array '{graph.output[0].name}' ({e})")
        if tpu.shape != ref.shape:
            fail(f"{args.tpu}: output has {tpu.size} elements, the model {ref.size}")
        rows.append(("tpu interpreter", cosine(ref, tpu)))
    width = max(26, max(len(label) for label, _ in rows) + 2)
    print(f"{'int8 rounding applied to':<{width}}cosine vs fp32")
    for label, c in rows:
        print(f"{label:<{width}}{c:.6f}")


if __name__ == "__main__":
    main()

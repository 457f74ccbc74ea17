"""Random chains of data movement for MoveChains (compiler/Lowering/MoveChains.cpp): seeded chains of
Transpose, Pad (zero or 0.5: fills that differ), Slice (steps, negative steps), Concat (of a chain's value
with a transform of itself, or of two slices of one value: a conv's depth taps) and Reshape, each a graph
output of one model, from a 5-D input. Writes DIR/chains_b1.onnx and DIR/chains_b4.onnx (the same chains at
batch 1 and 4), their inputs DIR/in_b1.npz and DIR/in_b4.npz, and calibration samples DIR/samples/s*.npz."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from onnx_writer import save_model  # noqa: E402

out = sys.argv[1]
CHAINS = 16


class Builder:
    def __init__(self):
        self.nodes, self.inits, self.n = [], [], 0

    def name(self, base):
        self.n += 1
        return f"{base}{self.n}"

    def const(self, values):
        name = self.name("k")
        self.inits.append(numpy_helper.from_array(np.array(values, dtype=np.int64), name))
        return name

    def node(self, op, inputs, **attrs):
        y = self.name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [y], **attrs))
        return y


def step(b, rng, x, v):
    """One random movement of value x (numpy stand-in v, for its shape); returns (name, value)."""
    kind = rng.choice(["transpose", "pad", "slice", "concat", "reshape", "taps"])
    rank = v.ndim
    if kind == "transpose":
        perm = [0] + list(rng.permutation(np.arange(1, rank)))  # the batch stays first
        return b.node("Transpose", [x], perm=perm), np.transpose(v, perm)
    if kind == "pad":
        pads = [0] * (2 * rank)
        for d in rng.choice(np.arange(1, rank), size=2, replace=False):
            pads[d], pads[rank + d] = int(rng.integers(0, 3)), int(rng.integers(0, 3))
        value = float(rng.choice([0.0, 0.5]))
        y = b.node("Pad", [x, b.const(pads), b.name("pv")], mode="constant")
        b.inits.append(numpy_helper.from_array(np.array(value, dtype=np.float32), b.nodes[-1].input[2]))
        return y, np.pad(v, [(pads[d], pads[rank + d]) for d in range(rank)], constant_values=value)
    if kind in ("slice", "taps"):
        d = int(rng.integers(1, rank))
        n = v.shape[d]
        if n < 3:
            return x, v
        if kind == "taps":  # two overlapping windows of dim d, side by side along it
            parts, vals = [], []
            for k in range(2):
                parts.append(b.node("Slice", [x, b.const([k]), b.const([n - 1 + k]), b.const([d])]))
                vals.append(np.take(v, np.arange(k, n - 1 + k), axis=d))
            return b.node("Concat", parts, axis=d), np.concatenate(vals, axis=d)
        if rng.random() < 0.3:  # reversed, step -1 or -2
            s = -int(rng.integers(1, 3))
            start, end = n - 1 - int(rng.integers(0, 2)), -n - 1
            idx = np.arange(start, -1, s)
        else:
            s = int(rng.integers(1, 3))
            start, end = int(rng.integers(0, 2)), n - int(rng.integers(0, 2))
            idx = np.arange(start, end, s)
        y = b.node("Slice", [x, b.const([start]), b.const([end]), b.const([d]), b.const([s])])
        return y, np.take(v, idx, axis=d)
    if kind == "concat":  # x beside its own reversal along d
        d = int(rng.integers(1, rank))
        n = v.shape[d]
        rev = b.node("Slice", [x, b.const([n - 1]), b.const([-n - 1]), b.const([d]), b.const([-1])])
        return b.node("Concat", [x, rev], axis=d), np.concatenate([v, np.flip(v, axis=d)], axis=d)
    # reshape: merge two neighbouring non-batch dims (or split the first back when it is a product)
    if rank > 3:
        d = int(rng.integers(1, rank - 1))
        shape = list(v.shape[:d]) + [v.shape[d] * v.shape[d + 1]] + list(v.shape[d + 2:])
    else:
        shape = list(v.shape) + [1]
    return b.node("Reshape", [x, b.const(shape)]), v.reshape(shape)


def build(batch):
    rng = np.random.default_rng(11)
    b = Builder()
    shape = (batch, 3, 4, 5, 6)
    zero = np.zeros(shape, dtype=np.float32)
    outputs = []
    for c in range(CHAINS):
        x, v = "x", zero
        for _ in range(int(rng.integers(2, 5))):
            x, v = step(b, rng, x, v)
        b.node("Identity", [x])
        b.nodes[-1].output[0] = f"y{c}"
        outputs.append(helper.make_tensor_value_info(f"y{c}", TensorProto.FLOAT, list(v.shape)))
    graph = helper.make_graph(b.nodes, "move_chains", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                              outputs, b.inits)
    save_model(graph, os.path.join(out, f"chains_b{batch}.onnx"), ir_version=8, check=True)
    data = np.random.default_rng(5)
    np.savez(os.path.join(out, f"in_b{batch}.npz"), x=data.uniform(-1, 1, shape).astype(np.float32))


for batch in (1, 4):
    build(batch)
os.makedirs(os.path.join(out, "samples"), exist_ok=True)
rng = np.random.default_rng(7)
for i in range(4):
    np.savez(os.path.join(out, "samples", f"s{i}.npz"), x=rng.uniform(-1, 1, (1, 3, 4, 5, 6)).astype(np.float32))

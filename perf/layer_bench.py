#!/usr/bin/python3
"""Per-layer sanity of the timing model from first principles: one-layer models of each common kind
(convs 1x1, 3x3, 3x3 stride 2, depthwise, an fc, an element-wise add, a max pool, an NCHW -> NHWC
transpose), compiled and simulated in FP32 b1, INT8 b1 and INT8 b4, against the chip's peaks
(../shared/reference/BM1684.md): 64 lanes x 32 fp32 MACs = 2048 MAC/cycle (2.2 TFLOPS at 550 MHz);
INT8 16,000 MAC/cycle (17.6 TOPS), a quarter of it at batch 1 (three of the four 4N bytes are padding);
element-wise 64 lanes x 32 fp32 / 128 int8 EUs. A kind far from its share of peak is mispriced or
compiled badly; the GDMA share says which engine bounds it.

    /usr/bin/python3 perf/layer_bench.py --tpuc build/tools/tpuc/tpuc [--work DIR] [--check] [--no-doc]

Writes the table between the layer-bench markers of docs/timing.md with its provenance line
(perf/provenance.py); --check re-runs the quick subset (conv 3x3 FP32 b1, the add INT8 b1) and exits 1
when a cell differs from the committed table.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import provenance

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DOC = os.path.join(ROOT, "docs", "timing.md")
TABLE = "layer-bench"
MODES = [("FP32", 1), ("INT8", 1), ("INT8", 4)]
QUICK = [("conv 3x3", "FP32", 1), ("add", "INT8", 1)]
# MACs per cycle at the engine's peak for the modes run: fp32, int8 at batch 4 (4N) and at batch 1.
MAC_PEAK = {("FP32", 1): 2048, ("INT8", 4): 16000, ("INT8", 1): 4000}
EU_PEAK = {"FP32": 64 * 32, "INT8": 64 * 128}


def conv(c_in, c_out, hw, k, stride=1, group=1):
    """A conv layer: (nodes, initializers, input shape without batch, MACs per image)."""
    rng = np.random.default_rng(c_in * 1000 + k)
    w = rng.normal(0, 0.1, (c_out, c_in // group, k, k)).astype(np.float32)
    b = rng.normal(0, 0.1, c_out).astype(np.float32)
    out_hw = (hw + 2 * (k // 2) - k) // stride + 1
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], kernel_shape=[k, k], pads=[k // 2] * 4,
                            strides=[stride, stride], group=group)
    macs = c_out * out_hw * out_hw * (c_in // group) * k * k
    return [node], [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")], [c_in, hw, hw], macs


def fc(k, n):
    rng = np.random.default_rng(k)
    w = rng.normal(0, 0.05, (n, k)).astype(np.float32)
    b = rng.normal(0, 0.05, n).astype(np.float32)
    node = helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1)
    return [node], [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")], [k], k * n


def add(c, hw):
    node = helper.make_node("Add", ["x", "x"], ["y"])
    return [node], [], [c, hw, hw], c * hw * hw


def max_pool(c, hw):
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    out = (hw + 2 - 3) // 2 + 1
    return [node], [], [c, hw, hw], c * out * out * 9


def transpose(c, hw):
    node = helper.make_node("Transpose", ["x"], ["y"], perm=[0, 2, 3, 1])
    return [node], [], [c, hw, hw], c * hw * hw


# name, builder, what the work counts, which peak applies
LAYERS = [
    ("conv 1x1", lambda: conv(256, 256, 28, 1), "MAC", "mac"),
    ("conv 3x3", lambda: conv(128, 128, 28, 3), "MAC", "mac"),
    ("conv 3x3 stride 2", lambda: conv(128, 128, 56, 3, stride=2), "MAC", "mac"),
    ("depthwise 3x3", lambda: conv(256, 256, 28, 3, group=256), "MAC", "eu"),
    ("fc 2048x1000", lambda: fc(2048, 1000), "MAC", "mac"),
    ("add", lambda: add(256, 28), "element", "eu"),
    ("max pool 3x3 stride 2", lambda: max_pool(128, 56), "tap", "eu"),
    ("transpose NCHW -> NHWC", lambda: transpose(64, 56), "element", None),
]


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"layer_bench: error: {' '.join(cmd[:2])} failed: {(r.stderr or r.stdout).strip().splitlines()[-1]}")


def measure(tpuc, work, name, build, quantize, batch):
    """Simulated stats of one layer in one mode."""
    nodes, inits, shape, work_per_image = build()
    d = os.path.join(work, name.replace(" ", "_").replace(">", "").replace("-", ""), f"{quantize}_b{batch}")
    os.makedirs(os.path.join(d, "samples"), exist_ok=True)
    x_shape = [batch] + shape
    graph = helper.make_graph(nodes, "layer", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), os.path.join(d, "m.onnx"))
    rng = np.random.default_rng(7)
    for i in range(4):
        np.savez(os.path.join(d, "samples", f"s{i}.npz"), x=rng.normal(0, 1, x_shape).astype(np.float32))
    np.savez(os.path.join(d, "in.npz"), x=rng.normal(0, 1, x_shape).astype(np.float32))
    run([tpuc, "import", os.path.join(d, "m.onnx"), "-o", os.path.join(d, "m.top.mlir")])
    deploy = [tpuc, "deploy", os.path.join(d, "m.top.mlir"), "--quantize", "F32" if quantize == "FP32" else quantize,
              "-o", os.path.join(d, "m.bmodel")]
    if quantize == "INT8":
        run([tpuc, "calibrate", os.path.join(d, "m.top.mlir"), "--dataset", os.path.join(d, "samples"),
             "--input-num", "4", "--int8-recipe", "none", "-o", os.path.join(d, "m.cali")])
        deploy += ["--calibration-table", os.path.join(d, "m.cali")]
    run(deploy)
    stats = os.path.join(d, "stats.json")
    run([tpuc, "run", os.path.join(d, "m.bmodel"), "--backend", "sim", "-i", os.path.join(d, "in.npz"),
         "-o", os.path.join(d, "out.npz"), "--stats", stats])
    with open(stats) as f:
        s = json.load(f)
    # The layer itself: its output is y, y_i8 in INT8 (the model's fp32 input and output add casts around it).
    own = next(l for l in s["layers"] if l["name"] == ("y_i8" if quantize == "INT8" else "y"))
    return dict(cycles=own["end_cycle"] - own["start_cycle"], tiu=own["tiu_busy_cycles"],
                gdma=own["gdma_busy_cycles"], tiu_cmds=own["tiu_commands"], gdma_cmds=own["gdma_commands"],
                work=work_per_image * batch, model=s["total_cycles"])


def row(name, unit, peak_kind, quantize, batch, m):
    per_cycle = m["work"] / m["cycles"]
    peak = MAC_PEAK.get((quantize, batch)) if peak_kind == "mac" else EU_PEAK[quantize] if peak_kind == "eu" else None
    share = f"{100 * per_cycle / peak:.1f} %" if peak else "–"
    return (f"| {name} | {quantize} b{batch} | {m['work'] / 1e6:.2f} M {unit}s | {m['cycles']:.0f} | "
            f"{m['tiu']:.0f} / {m['gdma']:.0f} | {m['tiu_cmds']} / {m['gdma_cmds']} | {per_cycle:.0f} | "
            f"{peak or '–'} | {share} | {m['model']:.0f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tpuc", default="tpuc")
    ap.add_argument("--work", default=os.path.join(ROOT, "build-layer-bench"))
    ap.add_argument("--no-doc", action="store_true", help="print the table only")
    ap.add_argument("--check", action="store_true", help="the quick subset against the committed table")
    a = ap.parse_args()
    stamp = None if a.no_doc or a.check else provenance.stamp_or_exit(TABLE)
    rows = ["| layer | mode | work | layer cycles | TIU / GDMA busy | TIU / GDMA commands | work per cycle | "
            "peak per cycle | share of peak | model cycles (with its casts) |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for name, build, unit, peak_kind in LAYERS:
        for quantize, batch in MODES:
            if a.check and (name, quantize, batch) not in QUICK:
                continue
            m = measure(a.tpuc, a.work, name, build, quantize, batch)
            rows.append(row(name, unit, peak_kind, quantize, batch, m))
            print(rows[-1], flush=True)
    table = "\n".join(rows)
    if a.check:
        with open(DOC) as f:
            committed = provenance.block_of(f.read(), TABLE) or ""
        lines = provenance.compare_tables("docs/timing.md", TABLE, committed, table, keys=2)
        for line in lines:
            print(line)
        print("layer_bench --check: the quick subset " + ("differs from" if lines else "reproduces")
              + " the committed table")
        sys.exit(1 if lines else 0)
    if a.no_doc:
        return
    provenance.confirm_or_exit(stamp, TABLE)
    provenance.write_block(TABLE, table, [stamp.line(TABLE)])


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Worked example (docs/exploration.md): how much of a model's latency on the
BM1684 is DDR bandwidth, and how much do layer groups buy back?

For one ONNX model it compiles two bmodels (F32, layer groups on / off) with
the same compiler tpuc uses, runs each on the timed simulator at several DDR
bandwidths with the same input, checks that the outputs do not depend on the
timing, and prints latency, engine utilization and the layer-group speedup per
bandwidth, plus the layers that grow most when bandwidth shrinks.

    PYTHONPATH=build/python /usr/bin/python3 perf/explore_ddr_bandwidth.py \
        --model models/out/resnet18.onnx --inputs models/out/resnet18_in.npz
    ... --tiny   # a 3-layer CNN built here (the CI run)
"""
import argparse
import csv
import os
import sys

import numpy as np

import tpusim


def tiny_model(path):
    """conv3x3(8->16)+relu -> conv3x3(16->16)+relu -> conv1x1(16->8), 1x8x32x32, fixed seed."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(1684)
    nodes, inits = [], []
    chans = [(8, 16, 3), (16, 16, 3), (16, 8, 1)]
    x = "input"
    for i, (ci, co, k) in enumerate(chans):
        w = (rng.standard_normal((co, ci, k, k)) / np.sqrt(ci * k * k)).astype(np.float32)
        b = (rng.standard_normal(co) * 0.1).astype(np.float32)
        inits += [numpy_helper.from_array(w, "w%d" % i), numpy_helper.from_array(b, "b%d" % i)]
        y = "conv%d" % i
        nodes.append(helper.make_node("Conv", [x, "w%d" % i, "b%d" % i], [y], pads=[k // 2] * 4, name=y))
        if i < len(chans) - 1:
            nodes.append(helper.make_node("Relu", [y], [y + "_relu"], name=y + "_relu"))
            y += "_relu"
        x = y
    graph = helper.make_graph(nodes, "tiny", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 8, 32, 32])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 8, 32, 32])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", help="ONNX model")
    ap.add_argument("--input-shapes", help="e.g. [[1,3,224,224]] when the model's are dynamic")
    ap.add_argument("--inputs", help=".npz of inputs (default: seeded uniform [-1, 1))")
    ap.add_argument("--tiny", action="store_true", help="use a small CNN built here instead of --model")
    ap.add_argument("--bandwidths", default="8,16,32,64", help="DDR bandwidths in GB/s")
    ap.add_argument("--workdir", default="explore_ddr_out")
    args = ap.parse_args()
    if not args.tiny and not args.model:
        ap.error("give --model model.onnx or --tiny")
    os.makedirs(args.workdir, exist_ok=True)
    onnx_path = tiny_model(os.path.join(args.workdir, "tiny.onnx")) if args.tiny else args.model
    shapes = None
    if args.input_shapes:
        import json
        shapes = json.loads(args.input_shapes)
    bandwidths = [float(b) for b in args.bandwidths.split(",")]

    builds = {}
    for lg in (True, False):
        builds[lg] = tpusim.compile_onnx(onnx_path, args.workdir, "F32", layer_group=lg, input_shapes=shapes)
        print("compiled %s" % builds[lg], file=sys.stderr)

    probe = tpusim.Model(builds[True], backend="func")
    if args.inputs:
        data = np.load(args.inputs)
        inputs = {t["name"]: data[t["name"]] for t in probe.inputs}
    else:
        rng = np.random.default_rng(0)
        inputs = {t["name"]: rng.uniform(-1, 1, t["shape"]).astype(np.float32) for t in probe.inputs}
    reference, _ = probe.run(inputs)

    rows = []
    layer_us = {}
    for bw in bandwidths:
        cfg = tpusim.config(ddrBandwidthGBs=bw)
        for lg in (True, False):
            model = tpusim.Model(builds[lg], backend="sim", config=cfg)
            out, rep = model.run(inputs)
            # Timing never changes data: every run equals the functional one.
            for name, ref in reference.items():
                if not np.array_equal(out[name], ref):
                    sys.exit("output %s differs from the func backend at %g GB/s" % (name, bw))
            rows.append({"ddr_gbs": bw, "layer_group": lg, "latency_us": rep.time_us,
                         "tiu_util": rep.tiu_utilization, "gdma_util": rep.gdma_utilization,
                         "ddr_bytes": rep.stats["ddr"]["bytes"]})
            if lg:
                layer_us[bw] = {l["name"]: (l["end_cycle"] - l["start_cycle"]) / rep.clock_mhz
                                for l in rep.stats["layers"]}

    with open(os.path.join(args.workdir, "ddr_bandwidth.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)

    name = os.path.basename(onnx_path)
    print("## %s: latency vs DDR bandwidth (F32, batch 1)\n" % name)
    print("| DDR GB/s | groups on (us) | TIU util | GDMA util | groups off (us) | TIU util | speedup from groups |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    by = {(r["ddr_gbs"], r["layer_group"]): r for r in rows}
    for bw in bandwidths:
        on, off = by[(bw, True)], by[(bw, False)]
        print("| %g | %.1f | %.0f %% | %.0f %% | %.1f | %.0f %% | %.2fx |" % (
            bw, on["latency_us"], 100 * on["tiu_util"], 100 * on["gdma_util"], off["latency_us"],
            100 * off["tiu_util"], off["latency_us"] / on["latency_us"]))
    lo, hi = min(bandwidths), max(bandwidths)
    for lg in (True, False):
        slow, fast = by[(lo, lg)]["latency_us"], by[(hi, lg)]["latency_us"]
        print("\nlayer groups %s: %gx the bandwidth makes it %.2fx faster" % ("on" if lg else "off", hi / lo, slow / fast))
    grow = sorted(((layer_us[lo].get(n, 0) - t, n) for n, t in layer_us[hi].items()), reverse=True)[:5]
    print("\nlayers that grow most from %g to %g GB/s (groups on):" % (hi, lo))
    for d, n in grow:
        print("  %-40s +%.1f us" % (n, d))
    # The question's sanity: less bandwidth is never faster.
    for lg in (True, False):
        lat = [by[(bw, lg)]["latency_us"] for bw in sorted(bandwidths)]
        if any(a < b - 1e-9 for a, b in zip(lat, lat[1:])):
            sys.exit("latency rises with bandwidth (layer groups %s): %s" % (lg, lat))


if __name__ == "__main__":
    main()

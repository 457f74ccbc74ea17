#!/usr/bin/python3
"""ResNet-50 simulated latency beside the published BM1684 numbers.

Runs `tpuc flow` on models/out/resnet50.onnx (FP32 b1, INT8 b1) and
resnet50_b4.onnx (INT8 b4; per-image latency = batch time / 4), parses the
simulated time from each summary and rewrites the table between the markers
in docs/validation.md, and a second table with the time per ResNet stage
(span, TIU busy, GDMA busy). The per-layer breakdown of each run is in its
work directory (<tag>_stats.json, <tag>_trace.json; `tpuc profile` makes a page).

Both tables carry their provenance line (perf/provenance.py); the script refuses to write them when
the code they measure has uncommitted changes. --check runs the quick subset (FP32 b1) and exits 1
when a cell of its rows differs from the committed tables (deterministic: no noise allowed).

usage: /usr/bin/python3 perf/validate_resnet50.py [--tpuc PATH] [--work DIR] [--no-doc | --check]
"""
import argparse
import json
import os
import re
import subprocess
import sys

import numpy as np

import provenance

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = os.path.join(ROOT, "models", "out")
DOC = os.path.join(ROOT, "docs", "validation.md")
STAGES = ["stem", "layer1", "layer2", "layer3", "layer4", "head"]

# (label, onnx, test input, quantize, batch, published ms per image)
RUNS = [
    ("FP32 b1", "resnet50.onnx", "resnet50_in.npz", "F32", 1, 6.36),
    ("INT8 b1", "resnet50.onnx", "resnet50_in.npz", "INT8", 1, 3.93),
    ("INT8 b4", "resnet50_b4.onnx", "resnet50_b4_in.npz", "INT8", 4, 1.24),
]


def batched_samples(work, batch):
    """Calibration samples for a batch-N model: the b1 samples stacked N at a time."""
    src = os.path.join(MODELS, "cali", "resnet50")
    files = sorted(f for f in os.listdir(src) if f.endswith(".npz"))
    if batch == 1:
        return src
    dst = os.path.join(work, f"cali_b{batch}")
    os.makedirs(dst, exist_ok=True)
    for i in range(len(files) // batch):
        group = [np.load(os.path.join(src, f)) for f in files[i * batch:(i + 1) * batch]]
        np.savez(os.path.join(dst, f"sample_{i:02d}.npz"),
                 **{k: np.concatenate([g[k] for g in group]) for k in group[0].files})
    return dst


def stage_of(layer):
    """ResNet-50 stage of a layer (bmodel layer names are the ONNX output names)."""
    for k in range(1, 5):
        if f"/layer{k}/" in layer:
            return f"layer{k}"
    return "head" if ("avgpool" in layer or layer.startswith("output")) else "stem"


def stage_breakdown(stats_path):
    """Per stage: span (first start to last end) and TIU / GDMA busy time, in ms."""
    with open(stats_path) as f:
        stats = json.load(f)
    clock_khz = stats["clock_mhz"] * 1e3
    out = {}
    for layer in stats["layers"]:
        st = out.setdefault(stage_of(layer["name"]), {"start": layer["start_cycle"], "end": layer["end_cycle"],
                                                      "tiu": 0.0, "gdma": 0.0})
        st["start"] = min(st["start"], layer["start_cycle"])
        st["end"] = max(st["end"], layer["end_cycle"])
        st["tiu"] += layer["tiu_busy_cycles"]
        st["gdma"] += layer["gdma_busy_cycles"]
    return {k: {"span": (v["end"] - v["start"]) / clock_khz, "tiu": v["tiu"] / clock_khz,
                "gdma": v["gdma"] / clock_khz} for k, v in out.items()}


def run_flow(tpuc, work, label, onnx, test_input, quantize, batch):
    wdir = os.path.join(work, label.replace(" ", "_").lower())
    cmd = [tpuc, "flow", os.path.join(MODELS, onnx), "--quantize", quantize,
           "--test-input", os.path.join(MODELS, test_input), "--work-dir", wdir]
    if quantize == "INT8":
        # The reference compiler's scheme (per-tensor weights), whose work the published latency measures.
        cmd += ["--calibration-data", batched_samples(work, batch), "--int8-recipe", "none"]
    print("+", " ".join(cmd), file=sys.stderr, flush=True)
    proc = subprocess.run(cmd, capture_output=True, text=True)
    with open(wdir + ".log", "w") as f:
        f.write(proc.stderr)
    if proc.returncode not in (0, 1):
        sys.exit(f"validate_resnet50: {label}: tpuc flow failed: {proc.stderr.strip().splitlines()[-1]}")
    summary = proc.stdout
    with open(wdir + ".summary", "w") as f:
        f.write(summary)
    m = re.search(r"simulated: (\d+) cycles = ([0-9.]+) us", summary)
    util = re.search(r"utilization: TIU ([0-9.]+) %, GDMA ([0-9.]+) %", summary)
    acc = re.search(r"top vs bmodel\s+cosine ([0-9.-]+)", summary)
    if not m or not util:
        sys.exit(f"validate_resnet50: {label}: no simulated time in the flow summary")
    stats = os.path.join(wdir, os.path.splitext(onnx)[0] + "_" + quantize.lower() + "_stats.json")
    return {"cycles": int(m.group(1)), "ms": float(m.group(2)) / 1e3, "tiu": util.group(1),
            "stages": stage_breakdown(stats),
            "gdma": util.group(2), "cosine": acc.group(1) if acc else "?",
            "pass": "PASS" if proc.returncode == 0 else "FAIL", "dir": os.path.relpath(wdir, ROOT)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tpuc", default="tpuc")
    ap.add_argument("--work", default=os.path.join(ROOT, "build-validate"))
    ap.add_argument("--no-doc", action="store_true")
    ap.add_argument("--check", action="store_true",
                    help="only FP32 b1, no doc: exit 1 when its cells differ from docs/validation.md's")
    args = ap.parse_args()
    stamp = None if args.no_doc or args.check else provenance.stamp_or_exit("resnet50-latency")
    os.makedirs(args.work, exist_ok=True)
    rows = ["| Run | Simulated ms / image | Published ms / image | Error | TIU / GDMA util | "
            "cosine vs fp32 reference | flow |",
            "|---|---|---|---|---|---|---|"]
    stage_rows = ["| Run | " + " | ".join(STAGES) + " |", "|---|" + "---|" * len(STAGES)]
    for label, onnx, test_input, quantize, batch, published in RUNS[:1] if args.check else RUNS:
        r = run_flow(args.tpuc, args.work, label, onnx, test_input, quantize, batch)
        cells = []
        for stage in STAGES:
            st = r["stages"].get(stage)
            cells.append(f"{st['span']:.2f} ({st['tiu']:.2f} / {st['gdma']:.2f})" if st else "-")
        stage_rows.append(f"| {label} | " + " | ".join(cells) + " |")
        per_image = r["ms"] / batch
        err = (per_image - published) / published * 100
        rows.append(f"| {label} | {per_image:.2f} | {published:.2f} | {err:+.1f} % | "
                    f"{r['tiu']} % / {r['gdma']} % | {r['cosine']} | {r['pass']} |")
        print(rows[-1], flush=True)
    table = "\n".join(rows)
    print("\n".join(stage_rows))
    if args.check:
        sys.exit(check_committed({"resnet50-latency": table, "resnet50-stages": "\n".join(stage_rows)}))
    if args.no_doc:
        return
    provenance.confirm_or_exit(stamp, "resnet50-latency")
    provenance.write_block("resnet50-latency", table, [stamp.line("resnet50-latency")])
    provenance.write_block("resnet50-stages", "\n".join(stage_rows), [stamp.line("resnet50-stages")])


def check_committed(fresh):
    """Exit status of --check: 1 when a cell of the fresh rows differs from the committed tables."""
    with open(DOC) as f:
        text = f.read()
    lines = [line for table_id, table in fresh.items()
             for line in provenance.compare_tables("docs/validation.md", table_id,
                                                   provenance.block_of(text, table_id) or "", table)]
    for line in lines:
        print(line)
    print("validate_resnet50 --check: FP32 b1 " + ("differs from" if lines else "reproduces") + " the committed tables")
    return 1 if lines else 0


if __name__ == "__main__":
    main()

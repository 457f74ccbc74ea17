#!/usr/bin/python3
"""What the INT8 recipe search costs: ResNet-50 `tpuc flow --quantize INT8` with the default recipe search against
`--int8-recipe none`, side by side, written into docs/quantization.md.

    /usr/bin/python3 perf/int8_recipe_bench.py [--tpuc build/tools/tpuc/tpuc] [--work DIR] [--repeat 2] [--no-doc]

Both flows calibrate on the 8 samples of models/out/cali/resnet50 and run models/out/resnet50_in.npz through every
stage. The runs alternate (none, auto, none, auto, ...) so that the machine's load falls on both alike; the table
gives each setting's median wall time, the ratio of the medians, the recipe the search chose, its candidates and the
top-vs-bmodel cosine on the test input. The default --int8-budget is chosen so that the ratio stays under 3
(issue: deploy with defaults <= 3x the INT8 flow before the recipe). A benchmark, not a test: nothing fails on the
ratio. Exit 2 with one line on bad input.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import provenance

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = os.path.join(ROOT, "models", "out")
TABLE = "int8-recipe-cost"
DOC = os.path.join(ROOT, "docs", "quantization.md")


def fail(msg):
    print(f"int8_recipe_bench: error: {msg}", file=sys.stderr)
    sys.exit(2)


def flow(tpuc, work, label, extra):
    wdir = os.path.join(work, label)
    cmd = [tpuc, "flow", os.path.join(MODELS, "resnet50.onnx"), "--quantize", "INT8", "--calibration-data",
           os.path.join(MODELS, "cali", "resnet50"), "--test-input", os.path.join(MODELS, "resnet50_in.npz"),
           "--work-dir", wdir, *extra]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.monotonic() - t0
    with open(wdir + ".log", "w") as f:
        f.write(proc.stderr)
    if proc.returncode not in (0, 1):
        lines = proc.stderr.strip().splitlines()
        fail(f"{label}: tpuc flow exited {proc.returncode}: {lines[-1] if lines else ''}")
    recipe = re.search(r"^int8 recipe: (.+)$", proc.stdout, re.M)
    cosine = re.search(r"top vs bmodel\s+cosine ([0-9.]+)", proc.stdout)
    if not recipe or not cosine:
        fail(f"{label}: no recipe or cosine in the flow summary (see {wdir}.log)")
    return seconds, recipe.group(1), float(cosine.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tpuc", default=os.path.join(ROOT, "build", "tools", "tpuc", "tpuc"))
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "int8_recipe_bench"))
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--no-doc", action="store_true", help="print the table only")
    a = ap.parse_args()
    if a.repeat < 1:
        fail("--repeat must be >= 1")
    if not os.access(a.tpuc, os.X_OK):
        fail(f"{a.tpuc}: not an executable (build first)")
    if not os.path.exists(os.path.join(MODELS, "resnet50.onnx")):
        fail("models/out/resnet50.onnx not found (scripts/models.sh)")
    os.makedirs(a.work, exist_ok=True)
    stamp = None if a.no_doc else provenance.stamp_or_exit(TABLE)
    times = {"none": [], "auto": []}
    last = {}
    for i in range(a.repeat):
        for label, extra in (("none", ["--int8-recipe", "none"]), ("auto", [])):
            seconds, recipe, cosine = flow(a.tpuc, a.work, f"{label}{i}", extra)
            times[label].append(seconds)
            last[label] = (recipe, cosine)
            print(f"int8_recipe_bench: {label} run {i + 1}: {seconds:.1f} s, {recipe}, cosine {cosine:.6f}", flush=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    rows = ["| ResNet-50 b1 INT8 flow | median wall time (s) | runs | INT8 recipe | top vs bmodel cosine |",
            "|---|---|---|---|---|"]
    for label in ("none", "auto"):
        recipe, cosine = last[label]
        rows.append(f"| `--int8-recipe {label}`{' (default)' if label == 'auto' else ''} | {med[label]:.1f} | "
                    f"{', '.join(f'{t:.1f}' for t in times[label])} | {recipe} | {cosine:.6f} |")
    rows.append("")
    rows.append(f"Ratio of the medians, auto / none: **{med['auto'] / med['none']:.2f}x** (alternating runs, "
                f"this machine, default --int8-budget).")
    table = "\n".join(rows)
    print(table)
    if a.no_doc:
        return
    provenance.confirm_or_exit(stamp, TABLE)
    provenance.write_block(TABLE, table, [stamp.line(TABLE)])


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Simulated BM1684 latency of the published model set (reference §8) beside the chip's.

For every model of models/latency (exported by models/latency/export.py when missing)
and every published mode (FP32 b1, INT8 b1, INT8 b4), compiles the model with tpuc
(import, calibrate on 8 seeded samples, deploy), simulates it with `tpuc sim --stats`
and writes docs/validation.md's latency table: simulated and published ms per image,
error, leave-one-model-out error, dominant engine and the three layers that take
longest, plus an SVG scatter (simulated against published, log axes, +-10 % band).
A model that does not compile gets a row with the compiler's one-line error.

The timing model has no parameter fitted to these figures (docs/timing.md), so the
leave-one-out error equals the in-sample error; the column is there for when one is.

usage: /usr/bin/python3 perf/validate_latency.py [--tpuc PATH] [--work DIR] [--quick]
                                                 [--models a,b] [--no-doc]
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = os.path.join(ROOT, "models", "out", "latency")
DOC = os.path.join(ROOT, "docs", "validation.md")
SVG = os.path.join(ROOT, "docs", "latency_scatter.svg")
BEGIN = "<!-- latency-set begin (perf/validate_latency.py) -->"
END = "<!-- latency-set end -->"

# Reference §8 (sophon-demo, SE5-16, bmrt_test, ms per image): FP32 b1, INT8 b1, INT8 b4.
PUBLISHED = {
    "resnet50": (6.36, 3.93, 1.24),
    "yolov8s": (26.47, 15.65, 9.36),
    "yolox_s": (26.01, 19.54, 8.975),
    "retinaface_mnet025": (6.31, 7.40, 4.75),
    "lprnet": (1.144, 1.070, 0.304),
    "centernet_dlav0": (46.2, 22.5, 8.1),
    "openpose_coco": (125.0, 63.0, 16.0),
    "yolov4": (77.5, 28.6, 13.4),
}
MODES = (("FP32 b1", "F32", 1), ("INT8 b1", "INT8", 1), ("INT8 b4", "INT8", 4))
QUICK = ("retinaface_mnet025",)


def run(cmd, log):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    with open(log, "a") as f:
        f.write("+ " + " ".join(cmd) + "\n" + proc.stdout + proc.stderr)
    if proc.returncode != 0:
        lines = [l for l in proc.stderr.strip().splitlines() if l.strip()]
        raise RuntimeError(lines[-1] if lines else f"{cmd[1]} exited {proc.returncode}")
    return proc.stdout


def simulate(tpuc, model, quantize, batch, work):
    """Compiles and simulates one mode; returns the stats JSON and the compile time."""
    sfx = "" if batch == 1 else f"_b{batch}"
    d = os.path.join(work, f"{model}{sfx}_{quantize.lower()}")
    os.makedirs(d, exist_ok=True)
    log = os.path.join(d, "log.txt")
    open(log, "w").close()
    top = os.path.join(d, "m.top.mlir")
    bmodel = os.path.join(d, f"{model}.bmodel")
    t0 = time.time()
    run([tpuc, "import", os.path.join(MODELS, f"{model}{sfx}.onnx"), "-o", top], log)
    deploy = [tpuc, "deploy", top, "--quantize", quantize, "-o", bmodel]
    if quantize == "INT8":
        cali = os.path.join(d, "m.cali")
        # A batch-4 export shares the batch-1 model's tensor names: calibrate on that.
        cali_top = os.path.join(d, "cali.top.mlir")
        run([tpuc, "import", os.path.join(MODELS, f"{model}.onnx"), "-o", cali_top], log)
        run([tpuc, "calibrate", cali_top, "--dataset", os.path.join(MODELS, "cali", model), "--input-num", "8",
             "-o", cali], log)
        deploy += ["--calibration-table", cali]
    run(deploy, log)
    compile_s = time.time() - t0
    stats = os.path.join(d, "stats.json")
    run([tpuc, "sim", bmodel, "--input", os.path.join(MODELS, f"{model}{sfx}_in.npz"),
         "-o", os.path.join(d, "out.npz"), "--stats", stats], log)
    with open(stats) as f:
        return json.load(f), compile_s


def summarize(stats, batch):
    eng = stats["engines"]
    dominant = "TIU" if eng["tiu"]["busy_cycles"] >= eng["gdma"]["busy_cycles"] else "GDMA"
    clock_khz = stats["clock_mhz"] * 1e3
    layers = sorted(stats["layers"], key=lambda l: l["end_cycle"] - l["start_cycle"], reverse=True)[:3]
    top = ", ".join(f"`{l['name']}` {(l['end_cycle'] - l['start_cycle']) / clock_khz:.2f}" for l in layers)
    return stats["time_us"] / 1e3 / batch, dominant, top


def scatter(points, path):
    """SVG: simulated against published ms per image, log axes, the +-10 % band."""
    w, h, m = 520, 460, 60
    vals = [v for p in points for v in p[2:4]]
    lo, hi = 10 ** math.floor(math.log10(min(vals))), 10 ** math.ceil(math.log10(max(vals)))
    sx = lambda v: m + (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)) * (w - 2 * m)  # noqa
    sy = lambda v: h - m - (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)) * (h - 2 * m)  # noqa
    colors = {"FP32 b1": "#1f77b4", "INT8 b1": "#d62728", "INT8 b4": "#2ca02c"}
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" '
           f'font-size="11"><rect width="{w}" height="{h}" fill="white"/>']
    band = [(lo, lo * 1.1), (hi, hi * 1.1), (hi, hi * 0.9), (lo, lo * 0.9)]
    out.append('<polygon fill="#eee" points="' + " ".join(f"{sx(a):.1f},{sy(b):.1f}" for a, b in band) + '"/>')
    out.append(f'<line x1="{sx(lo):.1f}" y1="{sy(lo):.1f}" x2="{sx(hi):.1f}" y2="{sy(hi):.1f}" stroke="#999"/>')
    d = lo
    while d <= hi:
        for axis in ("x", "y"):
            if axis == "x":
                out.append(f'<text x="{sx(d):.1f}" y="{h - m + 16}" text-anchor="middle">{d:g}</text>')
            else:
                out.append(f'<text x="{m - 6}" y="{sy(d) + 4:.1f}" text-anchor="end">{d:g}</text>')
        d *= 10
    out.append(f'<text x="{w / 2}" y="{h - 18}" text-anchor="middle">published ms per image (BM1684, SE5-16)</text>')
    out.append(f'<text x="16" y="{h / 2}" transform="rotate(-90 16 {h / 2})" text-anchor="middle">'
               'simulated ms per image</text>')
    for model, mode, sim, pub in points:
        out.append(f'<circle cx="{sx(pub):.1f}" cy="{sy(sim):.1f}" r="4" fill="{colors[mode]}">'
                   f'<title>{model} {mode}: {sim:.2f} vs {pub:.2f} ms</title></circle>')
    for i, (mode, c) in enumerate(colors.items()):
        out.append(f'<circle cx="{m + 10}" cy="{m + 14 * i}" r="4" fill="{c}"/>'
                   f'<text x="{m + 18}" y="{m + 14 * i + 4}">{mode}</text>')
    out.append(f'<text x="{m + 90}" y="{m + 4}">grey: +-10 %</text></svg>')
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def replace_block(text, table):
    block = f"{BEGIN}\n{table}\n{END}"
    if BEGIN in text and END in text:
        return text[:text.index(BEGIN)] + block + text[text.index(END) + len(END):]
    return text.rstrip("\n") + "\n\n" + block + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tpuc", default=os.path.join(ROOT, "build", "tools", "tpuc", "tpuc"))
    ap.add_argument("--work", default=os.path.join(ROOT, "build-validate", "latency"))
    ap.add_argument("--models", default="")
    ap.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK)} (CI)")
    ap.add_argument("--no-doc", action="store_true")
    args = ap.parse_args()
    names = list(QUICK) if args.quick else [m for m in args.models.split(",") if m] or list(PUBLISHED)
    unknown = [m for m in names if m not in PUBLISHED]
    if unknown:
        sys.exit(f"validate_latency: error: unknown model(s) {', '.join(unknown)}")
    missing = [m for m in names if not os.path.exists(os.path.join(MODELS, f"{m}_b4.onnx"))]
    if missing:
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "models", "latency", "export.py"),
                        "--models", ",".join(missing), "--out", MODELS], check=True)
    os.makedirs(args.work, exist_ok=True)
    rows = ["| model | mode | simulated ms | published ms | error | leave-one-out error | dominant | "
            "top layers (ms) |", "|---|---|---|---|---|---|---|---|"]
    points, failed, errors = [], [], {mode: [] for mode, _, _ in MODES}
    for model in names:
        for (mode, quantize, batch), published in zip(MODES, PUBLISHED[model]):
            try:
                stats, _ = simulate(args.tpuc, model, quantize, batch, args.work)
            except RuntimeError as e:
                failed.append(f"{model} {mode}: {e}")
                rows.append(f"| {model} | {mode} | - | {published:g} | - | - | - | does not compile: {e} |")
                print(rows[-1], flush=True)
                continue
            per_image, dominant, top = summarize(stats, batch)
            err = (per_image - published) / published * 100
            errors[mode].append(abs(err))
            points.append((model, mode, per_image, published))
            rows.append(f"| {model} | {mode} | {per_image:.3f} | {published:g} | {err:+.1f} % | {err:+.1f} % | "
                        f"{dominant} | {top} |")
            print(rows[-1], flush=True)
    summary = ["", "| mode | models simulated | mean absolute error | worst |", "|---|---|---|---|"]
    for mode, errs in errors.items():
        if errs:
            summary.append(f"| {mode} | {len(errs)} of {len(names)} | {np.mean(errs):.1f} % | {max(errs):.1f} % |")
        else:
            summary.append(f"| {mode} | 0 of {len(names)} | - | - |")
    table = "\n".join(rows + summary)
    print("\n".join(summary))
    if args.quick and failed:
        sys.exit("validate_latency: error: the quick set must compile: " + "; ".join(failed))
    if args.no_doc or args.quick:
        return
    if points:
        scatter(points, SVG)
    with open(DOC) as f:
        text = f.read()
    with open(DOC, "w") as f:
        f.write(replace_block(text, table))


if __name__ == "__main__":
    main()

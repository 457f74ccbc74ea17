#!/usr/bin/python3
"""Simulated BM1684X latency of the published model set beside the chip's (docs/bm1684x.md, "Published
latencies"; sophon-demo bmrt_test, ms per image).

For every model of models/latency (models/latency/export.py) and every published mode the BM1684X compiler
takes (FP32 b1, FP16 b1), deploys the model for the BM1684X (`tpuc deploy --chip bm1684x`; a model that does
not compile gets a row with the compiler's one-line error), prices each bmodel with the BM1684X timing model
(fit_timing --chip bm1684x: the same costs and cmd-id schedule the SystemC model runs; checked against
`tpuc sim` on the quick models), fits the timing model's free parameters (at most eight) once on all rows
(least squares on log error) and predicts each model from a fit on the other models (leave-one-out), and
writes docs/bm1684x.md's table between its markers with its provenance line. The simulated column is the
preset's (isa/bm1684x/HwPreset.cpp), in-sample once the preset holds the fit.

usage: /usr/bin/python3 perf/validate_latency_bm1684x.py [--tpuc PATH] [--fit-timing PATH] [--work DIR]
           [--models a,b] [--no-doc] [--jobs N]
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys

import numpy as np

import provenance

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = os.path.join(ROOT, "models", "out", "latency")
# docs/bm1684x.md "Published latencies" (sophon-demo release c7c94bb; UNet efa23c1): FP32 b1, FP16 b1.
PUBLISHED = {
    "resnet50": (9.14, 1.62), "yolov8s": (29.20, 5.48), "yolox_s": (27.92, 6.27),
    "retinaface_mnet025": (3.81, 1.35), "lprnet": (0.883, 0.585), "centernet_dlav0": (55.1, 9.2),
    "openpose_coco": (252.0, 19.0), "yolov4": (70.4, 13.6), "c3d": (79.05, 9.50),
    "yolov8s_seg": (39.7, 7.5), "yolov9s": (33.77, 7.50), "yolov9c_seg": (137.45, 21.44),
    "yolact": (212.68, 74.68), "unet": (1085.02, 102.13),
}
MODES = (("FP32 b1", "F32"), ("FP16 b1", "F16"))
QUICK = ("lprnet", "resnet50")  # also simulated by tpuc sim: fit_timing must price them as it simulates
# The timing model's free parameters and their boxes (isa/HwConfig.h names).
FIT = ("tiuStartupCycles:0:3000,gdmaStartupCycles:0:3000,ddrLatencyNs:0:3000,ddrBandwidthGBs:8:68.3,"
       "ddrBurstBytes:16:512,gdmaLmemBytesPerLanePerCycle:1:64,syncCycles:0:3000")


def fail(msg):
    sys.exit(f"validate_latency_bm1684x: error: {msg}")


def deploy(tpuc, model, quantize, work):
    d = os.path.join(work, f"{model}.{quantize}")
    os.makedirs(d, exist_ok=True)
    top, bmodel = os.path.join(d, "top.mlir"), os.path.join(d, "model.bmodel")
    for cmd in ([tpuc, "import", os.path.join(MODELS, f"{model}.onnx"), "-o", top],
                [tpuc, "deploy", top, "--chip", "bm1684x", "--quantize", quantize, "--no-cpu-subnets", "-o", bmodel]):
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode:
            return None, (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
    return bmodel, None


def sim_ms(tpuc, model, bmodel):
    stats = bmodel + ".stats.json"
    p = subprocess.run([tpuc, "sim", bmodel, "--input", os.path.join(MODELS, f"{model}_in.npz"), "-o",
                        bmodel + ".out.npz", "--stats", stats], capture_output=True, text=True)
    if p.returncode:
        fail(f"tpuc sim {bmodel}: {p.stderr.strip()}")
    with open(stats) as f:
        return json.load(f)["time_us"] / 1e3


def fit_timing(tool, manifest, extra):
    p = subprocess.run([tool, manifest, "--chip", "bm1684x"] + extra, capture_output=True, text=True)
    if p.returncode:
        fail(f"fit_timing: {p.stderr.strip()}")
    return json.loads(p.stdout)


def pct(ms, published):
    return (ms - published) / published * 100


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tpuc", default=os.path.join(ROOT, "build", "tools", "tpuc", "tpuc"))
    ap.add_argument("--fit-timing", default=os.path.join(ROOT, "build", "perf", "fit_timing"))
    ap.add_argument("--work", default="/tmp/latency_bm1684x")
    ap.add_argument("--models", default="")
    ap.add_argument("--no-doc", action="store_true")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    names = [m for m in args.models.split(",") if m] or list(PUBLISHED)
    for m in names:
        if m not in PUBLISHED:
            fail(f"no published BM1684X row for '{m}' ({', '.join(PUBLISHED)})")
        if not os.path.exists(os.path.join(MODELS, f"{m}.onnx")):
            fail(f"{MODELS}/{m}.onnx missing: /usr/bin/python3 models/latency/export.py --batch 1")
    stamp = None if args.no_doc else provenance.stamp_or_exit("bm1684x-latency")
    os.makedirs(args.work, exist_ok=True)
    jobs = [(m, label, q, PUBLISHED[m][i]) for m in names for i, (label, q) in enumerate(MODES)]
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        built = list(pool.map(lambda j: deploy(args.tpuc, j[0], j[2], args.work), jobs))
    rows = [dict(model=m, mode=label, published=pub, bmodel=b, error=e)
            for (m, label, q, pub), (b, e) in zip(jobs, built)]
    for r in rows:
        print(f"{r['model']} {r['mode']}: " + (r["error"] or "deployed"), flush=True)
    priced = [r for r in rows if r["bmodel"]]
    manifest = os.path.join(args.work, "manifest.tsv")
    with open(manifest, "w") as f:
        for r in priced:
            f.write(f"{r['model']}\t{r['mode']}\t1\t{r['published']}\t{r['bmodel']}\n")
    preset = fit_timing(args.fit_timing, manifest, ["--no-loo"])["rows"]
    fit = fit_timing(args.fit_timing, manifest, ["--fit", FIT])
    for r, p, f in zip(priced, preset, fit["rows"]):
        r["sim"], r["fit"], r["loo"] = p["simulated_ms"], f["simulated_ms"], f["loo_ms"]
    for r in priced:  # fit_timing prices what tpuc sim simulates
        if r["model"] in QUICK:
            ms = sim_ms(args.tpuc, r["model"], r["bmodel"])
            if abs(ms - r["sim"]) > 1e-6 * ms:
                fail(f"{r['model']} {r['mode']}: fit_timing prices {r['sim']:.6f} ms, tpuc sim gives {ms:.6f} ms")
            print(f"{r['model']} {r['mode']}: tpuc sim {ms:.4f} ms = fit_timing's price", flush=True)
    lines = ["| model | mode | published ms | simulated ms (preset) | error | fitted ms | error | left out ms | error |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if not r["bmodel"]:
            lines.append(f"| {r['model']} | {r['mode']} | {r['published']} | {r['error']} | | | | | |")
            continue
        lines.append(f"| {r['model']} | {r['mode']} | {r['published']} | {r['sim']:.3f} | "
                     f"{pct(r['sim'], r['published']):+.1f} % | {r['fit']:.3f} | {pct(r['fit'], r['published']):+.1f} % | "
                     f"{r['loo']:.3f} | {pct(r['loo'], r['published']):+.1f} % |")
    summary = []
    for label, key in (("preset", "sim"), ("fitted, in sample", "fit"), ("leave-one-model-out", "loo")):
        errs = [abs(pct(r[key], r["published"])) for r in priced]
        worst = max(priced, key=lambda r: abs(pct(r[key], r["published"])))
        summary.append(f"- {label}: MAPE {np.mean(errs):.1f} % over {len(errs)} rows of "
                       f"{len({r['model'] for r in priced})} models, worst {worst['model']} {worst['mode']} "
                       f"{pct(worst[key], worst['published']):+.1f} %")
    fitted = ", ".join(f"{k} = {v:g}" for k, v in fit["fitted"].items())
    body = "\n".join(lines) + "\n\n" + "\n".join(summary) + f"\n- fitted on all rows: {fitted}\n"
    print(body)
    if stamp:
        provenance.confirm_or_exit(stamp, "bm1684x-latency")
        provenance.write_block("bm1684x-latency", body, [stamp.line("bm1684x-latency")])


if __name__ == "__main__":
    main()

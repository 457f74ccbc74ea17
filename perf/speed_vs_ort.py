#!/usr/bin/python3
"""Simulator speed against onnxruntime, side by side in one run.

Times ResNet-50 INT8 batch 1 (this project's bmodel) on the `func` and the
`sim` backend (`tpuc run`, the launch's own wall time, model loading and
input conversion excluded) and the fp32 ONNX model on onnxruntime-node with
2 intra-op threads (tools/ort/run.js --bench: mean of the timed runs after a
warm-up), in interleaved rounds so that load from other processes on the
machine hits all three alike; prints the medians and the func/ORT and
sim/ORT ratios (targets: 3 and 10, issue 7).

usage: /usr/bin/python3 perf/speed_vs_ort.py [--tpuc PATH] [--bmodel B] [--rounds N]
       [--work DIR] [--onnx M] [--input IN] [--calibration DIR] [--threads T]
Without --bmodel the INT8 bmodel is compiled into --work first (tpuc import,
calibrate, deploy), and reused by the next run when its inputs are older.
Exit 0 when both targets are met, 1 when one is missed, 2 on a failed step.
"""
import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = os.path.join(ROOT, "models", "out")
FUNC_TARGET, SIM_TARGET = 3.0, 10.0


def run(cmd, what):
    """Runs cmd; returns (stdout, wall s, child CPU s). Exits 2 naming `what` on failure."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["exit code %d" % proc.returncode])[-1]
        sys.exit(f"speed_vs_ort: {what} failed: {last}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return proc.stdout, wall, cpu


def compile_int8(args):
    os.makedirs(args.work, exist_ok=True)
    top = os.path.join(args.work, "resnet50.top.mlir")
    table = os.path.join(args.work, "resnet50.cali.txt")
    bmodel = os.path.join(args.work, "resnet50_int8.bmodel")
    newest_input = max(os.path.getmtime(p) for p in (args.onnx, args.tpuc))
    if os.path.exists(bmodel) and os.path.getmtime(bmodel) > newest_input:
        return bmodel
    print("compiling", bmodel, file=sys.stderr, flush=True)
    run([args.tpuc, "import", args.onnx, "-o", top], "tpuc import")
    run([args.tpuc, "calibrate", top, "--dataset", args.calibration, "--int8-recipe", "none", "-o", table],
        "tpuc calibrate")
    run([args.tpuc, "deploy", top, "--quantize", "INT8", "--calibration-table", table, "-o", bmodel],
        "tpuc deploy")
    return bmodel


def time_backend(args, bmodel, backend):
    out = os.path.join(args.work, f"out_{backend}.npz")
    stdout, _, cpu = run([args.tpuc, "run", bmodel, "--input", args.input, "-o", out, "--backend", backend],
                         f"tpuc run --backend {backend}")
    m = re.search(r"wall time ([0-9.]+) ms", stdout)
    if not m:
        sys.exit(f"speed_vs_ort: tpuc run --backend {backend} printed no wall time")
    return float(m.group(1)), cpu


def time_ort(args, repeats):
    out = os.path.join(args.work, "out_ort.npz")
    stdout, _, cpu = run(["node", os.path.join(ROOT, "tools", "ort", "run.js"), args.onnx, args.input, out,
                          "--threads", str(args.threads), "--bench", str(repeats)], "onnxruntime (run.js)")
    m = re.search(r"mean ([0-9.]+) ms per inference", stdout)
    if not m:
        sys.exit("speed_vs_ort: run.js printed no bench line")
    return float(m.group(1)), cpu


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tpuc", default=os.path.join(ROOT, "build", "tools", "tpuc", "tpuc"))
    ap.add_argument("--bmodel", help="ResNet-50 INT8 b1 bmodel (default: compiled into --work)")
    ap.add_argument("--onnx", default=os.path.join(MODELS, "resnet50.onnx"))
    ap.add_argument("--input", default=os.path.join(MODELS, "resnet50_in.npz"))
    ap.add_argument("--calibration", default=os.path.join(MODELS, "cali", "resnet50"))
    ap.add_argument("--work", default=os.path.join(ROOT, "build-speed"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2, help="onnxruntime intra-op threads")
    args = ap.parse_args()
    if args.rounds < 1:
        sys.exit("speed_vs_ort: --rounds must be at least 1")
    for path, what in ((args.tpuc, "--tpuc"), (args.onnx, "--onnx"), (args.input, "--input")):
        if not os.path.exists(path):
            sys.exit(f"speed_vs_ort: {what} '{path}' does not exist")
    os.makedirs(args.work, exist_ok=True)
    bmodel = args.bmodel or compile_int8(args)

    times = {"func": [], "sim": [], "ort": []}
    cpus = {"func": [], "sim": [], "ort": []}
    ort_repeats = 5
    for r in range(args.rounds):
        for backend in ("func", "sim"):
            ms, cpu = time_backend(args, bmodel, backend)
            times[backend].append(ms)
            cpus[backend].append(cpu)
        ms, cpu = time_ort(args, ort_repeats)
        times["ort"].append(ms)
        cpus["ort"].append(cpu)
        print(f"round {r + 1}: func {times['func'][-1]:.1f} ms, sim {times['sim'][-1]:.1f} ms, "
              f"onnxruntime {ms:.1f} ms", file=sys.stderr, flush=True)

    med = {k: statistics.median(v) for k, v in times.items()}
    func_ratio, sim_ratio = med["func"] / med["ort"], med["sim"] / med["ort"]
    print(f"ResNet-50 wall time per inference, median of {args.rounds} rounds "
          f"(load {os.getloadavg()[0]:.1f} at the end):")
    print(f"  func (INT8 b1 bmodel)          {med['func']:9.1f} ms")
    print(f"  sim  (INT8 b1 bmodel)          {med['sim']:9.1f} ms")
    print(f"  onnxruntime fp32, {args.threads} thread(s) {med['ort']:9.1f} ms")
    print(f"  process CPU s (median): func {statistics.median(cpus['func']):.2f}, sim "
          f"{statistics.median(cpus['sim']):.2f}, onnxruntime {statistics.median(cpus['ort']):.2f} "
          f"(onnxruntime: {ort_repeats + 1} inferences + load)")
    print(f"func/ORT {func_ratio:.2f} (target <= {FUNC_TARGET:g})")
    print(f"sim/ORT  {sim_ratio:.2f} (target <= {SIM_TARGET:g})")
    sys.exit(0 if func_ratio <= FUNC_TARGET and sim_ratio <= SIM_TARGET else 1)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Golden timing regression of one program (gem5 style): builds the bmodel,
runs it on the SystemC model (`tpuc sim --stats`), and compares the timing
figures with the checked-in expected file tests/data/golden/CASE.stats exactly.
It also checks how far the compiler's cost model (estimateCycles) is from the
simulated total.

    golden.py --tpuc T --estimator E --src SRC --work DIR CASE SOURCE [QUANTIZE] [--update]

SOURCE is an assembler file under tests/data/asm (built with `tpuc asm`) or a
model of tests/golden/make_model.py (ONNX with seeded weights, built with
`tpuc import` + `tpuc calibrate` (INT8) + `tpuc deploy --quantize QUANTIZE`).
--update (or GOLDEN_UPDATE=1 in the environment, see scripts/update-golden.sh)
rewrites the expected file instead of comparing.

The expected file lists, one `key value` per line: total cycles; per engine the
commands and the busy, waiting and idle cycles; DDR bytes on the channel and
payload bytes; the LMEM peak; the same per command group and per layer; the
estimate; for compiled models the segment and layer-group counts.
"""
import argparse
import difflib
import json
import os
import re
import subprocess
import sys

import numpy as np

# estimateCycles (compiler/Backend/CodeGen.cpp) charges the same per-command
# costs (timing/) on the same cmd-id schedule as the SystemC model.
# They could differ only where DDR transfers overlap, which the estimate gives
# the whole bandwidth each and the DdrChannel shares; the BM1684 has one GDMA
# engine, so transfers never overlap, and the two agree up to the model's time
# resolution (1 ps = 1/1000 cycle, rounded once per command and once in the
# stats). Measured on the four programs: estimate / simulated = 1.000000, a
# difference of 0.000 cycles. A larger difference means the cost model and the
# simulator no longer agree on what a command costs or when it may start.
RESOLUTION_CYCLES = 0.001


def fail(msg):
    print(f"golden: error: {msg}", file=sys.stderr)
    sys.exit(1)


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        fail(f"{' '.join(cmd)} exited with {r.returncode}:\n{r.stdout}{r.stderr}")
    return r


def build_asm(args, source):
    path = os.path.join(args.src, "tests", "data", "asm", source)
    run([args.tpuc, "asm", path, "-o", "m.bmodel"])
    # conv_add's inputs (tests/data/asm/conv_add.s header), seeded.
    rng = np.random.default_rng(1684)
    np.savez("in.npz", x=rng.uniform(-1, 1, (1, 8, 10, 10)).astype(np.float32),
             y=rng.uniform(-1, 1, (1, 16, 8, 8)).astype(np.float32))
    return []


def build_model(args, model, quantize):
    run(["/usr/bin/python3", os.path.join(args.src, "tests", "golden", "make_model.py"), model, "."])
    run([args.tpuc, "import", model + ".onnx", "-o", "m.top.mlir"])
    deploy = [args.tpuc, "deploy", "m.top.mlir", "--quantize", quantize, "-o", "m.bmodel"]
    if quantize == "INT8":
        run([args.tpuc, "calibrate", "m.top.mlir", "--data", f"{model}_cali_0.npz,{model}_cali_1.npz",
             "--method", "max", "--int8-recipe", "none", "-o", "m.cali"])  # deterministic: no timed search
        deploy += ["--calibration-table", "m.cali"]
    report = run(deploy).stderr
    os.replace(f"{model}_in.npz", "in.npz")
    m = re.search(r"code generation: (\d+) segments \((\d+) layer groups\)", report)
    est = re.search(r"estimated total: (\d+) cycles", report)
    if not m or not est:
        fail(f"no code generation summary in the deploy report:\n{report}")
    return [("compiler.segments", m.group(1)), ("compiler.layer_groups", m.group(2)),
            ("compiler.estimated_total", est.group(1))]


def stats_lines(stats):
    lines = [("total_cycles", stats["total_cycles"])]
    for eng in ("tiu", "gdma"):
        for key in ("commands", "busy_cycles", "waiting_cycles", "idle_cycles"):
            lines.append((f"{eng}.{key}", stats["engines"][eng][key]))
    lines += [("ddr.bytes", stats["ddr"]["bytes"]), ("ddr.payload_bytes", stats["ddr"]["payload_bytes"]),
              ("lmem_peak_bytes", stats["lmem_peak_bytes"])]
    per = ("tiu_commands", "gdma_commands", "tiu_busy_cycles", "gdma_busy_cycles")
    for g in stats["groups"]:
        for key in ("start_cycle", "end_cycle") + per + ("lmem_peak_bytes",):
            lines.append((f"group[{g['index']}].{key}", g[key]))
    for layer in stats["layers"]:
        for key in ("start_cycle", "end_cycle") + per:
            lines.append((f"layer[{layer['name']}].{key}", layer[key]))
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tpuc", required=True)
    ap.add_argument("--estimator", required=True, help="golden_estimate_cycles")
    ap.add_argument("--src", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--update", action="store_true")
    ap.add_argument("case")
    ap.add_argument("source")
    ap.add_argument("quantize", nargs="?")
    args = ap.parse_args()
    args.tpuc, args.estimator, args.src = (os.path.abspath(p) for p in (args.tpuc, args.estimator, args.src))
    update = args.update or os.environ.get("GOLDEN_UPDATE") == "1"
    expected_path = os.path.join(args.src, "tests", "data", "golden", args.case + ".stats")

    os.makedirs(args.work, exist_ok=True)
    os.chdir(args.work)
    compiler = build_asm(args, args.source) if args.source.endswith(".s") else build_model(
        args, args.source, args.quantize)
    run([args.tpuc, "sim", "m.bmodel", "--input", "in.npz", "-o", "out.npz", "--stats", "stats.json"])
    with open("stats.json") as f:
        # Numbers as printed (exact), not as Python floats.
        stats = json.load(f, parse_float=str, parse_int=str)
    est = run([args.estimator, "m.bmodel"]).stdout.split()
    lines = stats_lines(stats) + [("estimate_cycles", est[1])] + compiler

    text = f"# golden timing of {args.case} ({args.source}{' ' + args.quantize if args.quantize else ''}), " \
           "default HwConfig; rewrite with scripts/update-golden.sh\n"
    text += "".join(f"{k} {v}\n" for k, v in lines)
    if update:
        os.makedirs(os.path.dirname(expected_path), exist_ok=True)
        with open(expected_path, "w") as f:
            f.write(text)
        print(f"golden: wrote {expected_path}")
    else:
        try:
            with open(expected_path) as f:
                expected = f.read()
        except OSError as e:
            fail(f"{expected_path}: {e.strerror} (scripts/update-golden.sh writes it)")
        if expected != text:
            diff = difflib.unified_diff(expected.splitlines(True), text.splitlines(True),
                                        expected_path, "simulated now")
            sys.stdout.writelines(diff)
            fail(f"{args.case}: the timing differs from {expected_path}; if the timing model changed on "
                 "purpose, run scripts/update-golden.sh and commit the new files")
        print(f"golden: {args.case}: {len(lines)} figures equal {expected_path}")

    total, estimate = float(stats["total_cycles"]), float(est[1])
    commands = int(stats["engines"]["tiu"]["commands"]) + int(stats["engines"]["gdma"]["commands"])
    allowed = RESOLUTION_CYCLES * (commands + 1)
    print(f"golden: {args.case}: estimateCycles {estimate:.3f} / simulated {total:.3f} = {estimate / total:.6f}, "
          f"difference {abs(estimate - total):.3f} cycles (allowed {allowed:.3f})")
    if abs(estimate - total) > allowed:
        fail(f"{args.case}: estimateCycles {estimate:.3f} differs from the simulated total {total:.3f} by more "
             f"than {allowed:.3f} cycles (the model's resolution per command)")
    if compiler and abs(float(dict(compiler)["compiler.estimated_total"]) - estimate) > 0.5:
        fail(f"{args.case}: deploy's estimated total {dict(compiler)['compiler.estimated_total']} is not "
             f"the estimate of the bmodel's commands ({estimate:.0f})")
    if args.case.startswith("cnn_grouped") and int(dict(compiler)["compiler.layer_groups"]) == 0:
        fail(f"{args.case}: the compiler formed no layer group")


if __name__ == "__main__":
    main()

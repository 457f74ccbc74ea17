#!/usr/bin/python3
"""Simulated BM1684 latency of the published model set (reference §8, §10) beside the chip's.

For every model of models/latency (exported by models/latency/export.py when missing)
and every published mode (FP32 b1, INT8 b1, INT8 b4; a mode not published has no row), compiles the model with tpuc
(import, calibrate on 4 seeded samples, deploy), simulates it with `tpuc sim --stats`
and writes docs/validation.md's latency table: simulated and published ms per image,
error, leave-one-model-out and leave-one-family-out error (FAMILIES: the YOLOs out at once, VGG19 with OpenPose),
dominant engine and the three layers that take
longest, plus an SVG scatter (simulated against published, log axes, +-10 % band), and the work
report of each row (work_report: layer groups, commands, TIU MACs, DDR bytes, conversion ops).
A model that does not compile gets a row with the compiler's one-line error.

Then (unless --no-fit or --quick) fit_timing (perf/TimingFit.cpp) refits the fitted
parameters of isa/HwConfig.h (FITTED below, at most eight) once on all rows together,
least squares on log error, and predicts each model from a fit on the others: the
leave-one-out column. "simulated" is `tpuc sim` with the defaults, so once the defaults
are the fit (docs/timing.md) it is the in-sample figure. --stages adds the candidate
causes one at a time and rewrites docs/timing.md's table of what each did to the error, and refits under
fit_timing's counterfactual overlaps (how far a compiler that overlaps more could get).

Every table it writes carries its provenance line (perf/provenance.py: commit, date, command);
it refuses to write when the code the tables measure has uncommitted changes, and reuses a
--work folder's bmodels or calibration tables only when no later commit changed that code.
--check compiles and simulates the quick set (no fit) and compares each of its cells with
the committed tables (latency and work report): the simulation is deterministic, so the stated
noise is none and any difference fails (exit 1; scripts/check-docs.sh).

usage: /usr/bin/python3 perf/validate_latency.py [--tpuc PATH] [--work DIR] [--quick | --check]
           [--models a,b] [--no-doc] [--no-fit] [--stages] [--reuse-calibration]
           [--reuse-bmodels] [--fit-timing PATH]
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import time

import numpy as np

import provenance

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = os.path.join(ROOT, "models", "out", "latency")
DOC = os.path.join(ROOT, "docs", "validation.md")
SVG = os.path.join(ROOT, "docs", "latency_scatter.svg")

# Reference §8 and §10 (sophon-demo, SE5-16, bmrt_test, ms per image): FP32 b1, INT8 b1, INT8 b4; None where a
# mode is not published (no row: out of the fits and the mean errors).
PUBLISHED = {
    "resnet50": (6.36, 3.93, 1.24),
    "yolov8s": (26.47, 15.65, 9.36),
    "yolox_s": (26.01, 19.54, 8.975),
    "retinaface_mnet025": (6.31, 7.40, 4.75),
    "lprnet": (1.144, 1.070, 0.304),
    "centernet_dlav0": (46.2, 22.5, 8.1),
    "openpose_coco": (125.0, 63.0, 16.0),
    "yolov4": (77.5, 28.6, 13.4),
    "c3d": (62.37, 28.25, 7.39),  # per 16-frame clip
    # §10, sophon-demo READMEs.
    "yolov8s_seg": (38.5, 26.4, 16.3),
    "yolov9s": (36.52, 25.69, 18.66),
    "yolov9c_seg": (108.30, 57.20, 24.53),
    "yolact": (114.60, 135.59, 53.90),
    # §10, tpu-perf tables of the model-zoo's pull requests (the chip attribution likely, not certain); UNet's
    # INT8 b4 is 150.5 ms per batch of 4.
    "vgg19": (36.2, 16.8, None),
    "unet": (330.8, 132.2, 150.5 / 4),
}
# Published rows whose chip is in doubt, out of the default set (and so out of the fits): run only when named
# with --models. EfficientNetV2 (§10, tpu-perf): the zoo's config compiles it for BM1684X
# (models/latency/efficientnetv2.py).
UNCERTAIN = {"efficientnetv2": (10.39, 15.19, None)}
MODES = (("FP32 b1", "F32", 1), ("INT8 b1", "INT8", 1), ("INT8 b4", "INT8", 4))
# Families left out together by the leave-one-family-out fits (a model not named is a family of its own): a
# family's members share a structure, so one member in the fit vouches for the others.
FAMILIES = {"yolov8s": "yolo", "yolox_s": "yolo", "yolov4": "yolo", "yolov8s_seg": "yolo", "yolov9s": "yolo",
            "yolov9c_seg": "yolo", "vgg19": "vgg", "openpose_coco": "vgg"}

# The fitted parameters (isa/HwConfig.h; at most eight) with the box the fit searches.
FITTED = (("tiuStartupCycles", 0, 4000), ("ddrLatencyNs", 0, 4000), ("ddrBurstBytes", 4, 256),
          ("gdmaLmemBytesPerLanePerCycle", 0.3, 64), ("gdmaLmemMinElementBytes", 1, 16), ("syncCycles", 0, 8000),
          ("lutCyclesPerElement", 0.01, 16))
# Parameters measured and not kept (docs/timing.md): each is fitted in its own stage of --stages, then
# returns to NEUTRAL's value. The GDMA's per-command cost is the same per-command time as ddrLatencyNs
# (it fits anywhere in 0..250 cycles, and fitting both makes the leave-one-out predictions worse);
# bank conflicts fit to 0.
GDMA_STARTUP = ("gdmaStartupCycles", 0, 4000)
BANK_CONFLICTS = ("bankConflictFactor", 0, 2)
# main's timing model before the first fit (the LMEM port as 8 bytes per lane = its 512 per cycle at 64 lanes;
# a lookup as fast as an fp32 element-wise pass, 32 elements per lane per cycle).
NEUTRAL = {"gdmaClockMhz": 550, "ddrBandwidthGBs": 32, "ddrLatencyNs": 200, "ddrBurstBytes": 64,
           "gdmaLmemBytesPerLanePerCycle": 8, "gdmaLmemMinElementBytes": 1, "tiuStartupCycles": 40,
           "gdmaStartupCycles": 60, "syncCycles": 0, "bankConflictFactor": 0, "lutCyclesPerElement": 1 / 32}
# The candidate causes in the order they are added: (cause, sourced values, fitted parameters); a cause
# whose parameters are in DROPPED is fitted in its stage, then reset to NEUTRAL's value for the next.
CAUSES = (
    ("none (main's model before the fits)", {}, ()),
    ("GDMA clock 575 MHz (published)", {"gdmaClockMhz": 575}, ()),
    ("DDR 25.2 GB/s on the channel (2 x the published 12.6 GB/s copy)", {"ddrBandwidthGBs": 25.2}, ()),
    ("per-command issue overheads of TIU and GDMA", {}, (FITTED[0], GDMA_STARTUP)),
    ("DDR efficiency per access pattern: first-byte latency, burst size", {}, FITTED[1:3]),
    ("GDMA LMEM port per lane (few-channel tensors)", {}, FITTED[3:4]),
    ("4N/1N conversion: an int8 element takes a word of the LMEM side", {}, FITTED[4:5]),
    ("cmd_id synchronisation cost", {}, FITTED[5:6]),
    ("LMEM bank conflicts", {}, (BANK_CONFLICTS,)),
    ("table lookups one element per lane at a time", {}, FITTED[6:7]),
)
DROPPED = (GDMA_STARTUP, BANK_CONFLICTS)
QUICK = ("retinaface_mnet025",)
# Calibration for latency: the thresholds decide no command shape, only which few ops fall back to fp32
# (an add whose multiplier leaves int8), so 4 seeded samples and KL without the max check suffice. The
# check (lower both tables, run the INT8 Tpu interpreter on the samples) took 80 % of ResNet-50's
# calibration time and would take about an hour on OpenPose (136 GMAC) on this machine.
CALIBRATION_SAMPLES = 4


def run(cmd, log):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    with open(log, "a") as f:
        f.write("+ " + " ".join(cmd) + "\n" + proc.stdout + proc.stderr)
    if proc.returncode != 0:
        lines = [l for l in proc.stderr.strip().splitlines() if l.strip()]
        raise RuntimeError(lines[-1] if lines else f"{cmd[1]} exited {proc.returncode}")
    return proc.stdout


def simulate(tpuc, model, quantize, batch, work, reuse_calibration=False, reuse_bmodels=False, config=None):
    """Compiles and simulates one mode; returns the stats JSON and the bmodel path."""
    sfx = "" if batch == 1 else f"_b{batch}"
    d = os.path.join(work, f"{model}{sfx}_{quantize.lower()}")
    os.makedirs(d, exist_ok=True)
    log = os.path.join(d, "log.txt")
    open(log, "w").close()
    top = os.path.join(d, "m.top.mlir")
    bmodel = os.path.join(d, f"{model}.bmodel")
    stats = os.path.join(d, "stats.json")
    if reuse_bmodels and os.path.exists(bmodel):
        run([tpuc, "sim", bmodel, "--input", os.path.join(MODELS, f"{model}{sfx}_in.npz"),
             "-o", os.path.join(d, "out.npz"), "--stats", stats] + (["--config", config] if config else []), log)
        with open(stats) as f:
            return json.load(f), bmodel
    t0 = time.time()
    run([tpuc, "import", os.path.join(MODELS, f"{model}{sfx}.onnx"), "-o", top], log)
    deploy = [tpuc, "deploy", top, "--quantize", quantize, "-o", bmodel]
    if quantize == "INT8":
        # One table per model, written by the batch-1 run: a batch-4 export shares the batch-1 model's
        # tensor names. Calibration takes minutes on the large models and depends on neither the timing
        # model nor the code generator: --reuse-calibration keeps a table an earlier run wrote.
        cali_dir = os.path.join(work, f"{model}_int8")
        cali = os.path.join(cali_dir, "m.cali")
        onnx_b1 = os.path.join(MODELS, f"{model}.onnx")
        if reuse_bmodels and not os.path.exists(cali):
            raise RuntimeError("not calibrated: no table from an earlier run in --work")
        if not os.path.exists(cali) or (batch == 1 and not reuse_calibration):
            cali_top = os.path.join(cali_dir, "cali.top.mlir")
            run([tpuc, "import", onnx_b1, "-o", cali_top], log)
            run([tpuc, "calibrate", cali_top, "--dataset", os.path.join(MODELS, "cali", model), "--input-num",
                 str(CALIBRATION_SAMPLES), "--no-max-fallback", "--int8-recipe", "none", "-o", cali], log)
        deploy += ["--calibration-table", cali]
    run(deploy, log)
    print(f"  {model}{sfx} {quantize}: compiled in {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    run([tpuc, "sim", bmodel, "--input", os.path.join(MODELS, f"{model}{sfx}_in.npz"),
         "-o", os.path.join(d, "out.npz"), "--stats", stats] + (["--config", config] if config else []), log)
    with open(stats) as f:
        return json.load(f), bmodel


def summarize(stats, batch):
    """ms per image, the busier engine, the three layers that keep an engine busiest (TIU / GDMA busy ms of
    the batch; a layer group's loads count for the layer that first reads them), and the engines' busy ms and
    commands of the batch."""
    eng = stats["engines"]
    dominant = "TIU" if eng["tiu"]["busy_cycles"] >= eng["gdma"]["busy_cycles"] else "GDMA"
    ms = lambda cycles: cycles / (stats["clock_mhz"] * 1e3)  # noqa: E731
    busiest = lambda l: max(l["tiu_busy_cycles"], l["gdma_busy_cycles"])  # noqa: E731
    layers = sorted(stats["layers"], key=busiest, reverse=True)[:3]
    top = ", ".join(f"`{l['name'].removesuffix('_output_0')}` {ms(l['tiu_busy_cycles']):.2f} / "
                    f"{ms(l['gdma_busy_cycles']):.2f}" for l in layers)
    work = {"tiu_ms": ms(eng["tiu"]["busy_cycles"]), "gdma_ms": ms(eng["gdma"]["busy_cycles"]),
            "tiu_commands": eng["tiu"]["commands"], "gdma_commands": eng["gdma"]["commands"]}
    return stats["time_us"] / 1e3 / batch, dominant, top, work


# The op kinds the work report counts as conversions: numeric format (fp32 <-> int8, int8 rescale) and layout
# (data moved in DDR to another arrangement: permute, pad, batch-changing reshape).
CONVERSIONS = (("cast", ("tpu.cast",)), ("requant", ("tpu.requant",)), ("move", ("tpu.move", "tpu.reshape")))


def op_kinds(tpu_mlir):
    """Layer name -> Tpu op kind ("tpu.conv") of a deployed module, by each op's location name."""
    names, kinds = {}, {}
    with open(tpu_mlir) as f:
        for line in f:
            loc = re.match(r'#(loc\d+) = loc\("([^"]*)"\)', line)
            if loc:
                names[loc[1]] = loc[2]
            op = re.search(r'"(tpu\.\w+)"\(.*loc\(#(loc\d+)\)\s*$', line)
            if op:
                kinds[op[2]] = op[1]
    return {names[loc]: kind for loc, kind in kinds.items() if loc in names}


def kind_of(kinds, layer):
    """A layer's op kind; the code generator names the copies of one op `<name>_1`, `<name>_2`, ..."""
    return kinds.get(layer) or kinds.get(re.sub(r"_\d+$", "", layer), "")


def work_report(tpuc, stats, bmodel):
    """What the program asks of the chip, per batch, from the bmodel (`tpuc dis --work`: command groups, commands,
    TIU MACs, DDR payload bytes) and the run's stats (busy time per layer): layer groups (command groups of
    several ops) and their ops, global ops (a command group of one op), conversions per kind of CONVERSIONS and
    their share of the two engines' busy time (a layer group's loads count for the layer that first reads them)."""
    proc = subprocess.run([tpuc, "dis", bmodel, "--work"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"tpuc dis --work: {proc.stderr.strip()}")
    net = json.loads(proc.stdout)["nets"][0]
    kinds = op_kinds(os.path.splitext(bmodel)[0] + ".tpu.mlir")
    sizes = [len(g["layers"]) for g in net["groups"]]
    total = lambda key: sum(l[key] for l in net["layers"])  # noqa: E731
    busy = {l["name"]: l["tiu_busy_cycles"] + l["gdma_busy_cycles"] for l in stats["layers"]}
    all_busy = stats["engines"]["tiu"]["busy_cycles"] + stats["engines"]["gdma"]["busy_cycles"]
    conversions = {}
    for what, ops in CONVERSIONS:
        names = [l["name"] for l in net["layers"] if kind_of(kinds, l["name"]) in ops]
        conversions[what] = (len(names), sum(busy.get(name, 0) for name in names) / all_busy)
    return {"layer_groups": sum(n > 1 for n in sizes), "grouped_ops": sum(n for n in sizes if n > 1),
            "global_ops": sum(n == 1 for n in sizes), "tiu_commands": total("tiu_commands"),
            "gdma_commands": total("gdma_commands"), "tiu_gmac": total("tiu_macs") / 1e9,
            "weight_mb": total("ddr_coeff_read_bytes") / 1e6,
            "activation_mb": (total("ddr_read_bytes") - total("ddr_coeff_read_bytes")) / 1e6,
            "written_mb": total("ddr_written_bytes") / 1e6,
            "conversions": conversions}


def scatter(points, path, stamp):
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
    out.append(f'<text x="{m + 90}" y="{m + 4}">grey: +-10 %</text>')
    out.append(f"<desc>{stamp.line('latency-scatter')}</desc></svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def write_manifest(results, work):
    path = os.path.join(work, "manifest.tsv")
    with open(path, "w") as f:
        for r in results:
            if "sim" in r:
                f.write(f"{r['model']}\t{r['mode']}\t{r['batch']}\t{r['published']}\t{r['bmodel']}\t"
                        f"{FAMILIES.get(r['model'], r['model'])}\n")
    return path


def run_fit(fit_timing, manifest, config, params, loo=True, overlap="compiled"):
    """fit_timing's JSON: the fitted values of `params` over `config` and per row in-sample / LOO ms, the
    engines overlapped as compiled or as one of fit_timing's counterfactual bounds (`overlap`)."""
    cmd = [fit_timing, manifest, "--config", config, "--overlap", overlap]
    if params:
        cmd += ["--fit", ",".join(f"{n}:{lo}:{hi}" for n, lo, hi in params)]
    if not loo:
        cmd.append("--no-loo")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"validate_latency: error: fit_timing: {proc.stderr.strip()}")
    return json.loads(proc.stdout)


def config_file(work, config):
    """--config, or a config of BM1684's defaults."""
    if config:
        return config
    path = os.path.join(work, "defaults.json")
    with open(path, "w") as f:
        f.write("{}")
    return path


def fit_parameters(fit_timing, results, work, config=None):
    """Refits FITTED from the defaults (or --config) on every simulated row, with the leave-one-out fits."""
    fit = run_fit(fit_timing, write_manifest(results, work), config_file(work, config), FITTED)
    with open(os.path.join(work, "fit.json"), "w") as f:
        json.dump(fit, f, indent=2)
    for name, value in fit["fitted"].items():
        print(f"fitted {name} = {value:g}", flush=True)
    return fit


def check_fit_prices_the_simulation(fit_timing, results, work, config=None):
    """The fit prices each bmodel with the timing library on the cmd-id schedule; that must be the SystemC
    model's time (one GDMA engine: no DDR sharing), or the fitted parameters would fit something else."""
    priced = run_fit(fit_timing, write_manifest(results, work), config_file(work, config), (), loo=False)["rows"]
    for r, p in zip([r for r in results if "sim" in r], priced):
        if abs(p["simulated_ms"] - r["sim"]) > 1e-6 * r["sim"]:
            sys.exit(f"validate_latency: error: {r['model']} {r['mode']}: fit_timing prices {p['simulated_ms']:.6f} ms, "
                     f"tpuc sim gives {r['sim']:.6f} ms")
    print(f"fit_timing prices all {len(priced)} rows as tpuc sim simulates them (within 1e-6)", flush=True)


def error_pct(ms, published):
    """Signed error of a simulated time against the published one, in percent."""
    return (ms - published) / published * 100


def mape(errors):
    return f"{np.mean(np.abs(errors)):.1f} %" if errors else "-"


def latency_table(results, fit, model_counts):
    loo, lofo = {}, {}
    if fit:
        loo = {(row["model"], row["mode"]): row["loo_ms"] for row in fit["rows"]}
        lofo = {(row["model"], row["mode"]): row["lofo_ms"] for row in fit["rows"]}
    rows = ["| model | mode | simulated ms | published ms | error | leave-one-out error | leave-one-family-out error "
            "| dominant | top layers (TIU / GDMA busy ms) |", "|---|---|---|---|---|---|---|---|---|"]
    errors = {mode: ([], [], []) for mode, _, _ in MODES}
    for r in results:
        if "sim" not in r:
            rows.append(f"| {r['model']} | {r['mode']} | - | {r['published']:g} | - | - | - | - | "
                        f"not simulated: {r['error']} |")
            continue
        err = error_pct(r["sim"], r["published"])
        errors[r["mode"]][0].append(err)
        cells = []
        for k, left_out in ((1, loo), (2, lofo)):
            ms = left_out.get((r["model"], r["mode"]))
            if ms is None:
                cells.append("-")
                continue
            errors[r["mode"]][k].append(error_pct(ms, r["published"]))
            cells.append(f"{errors[r['mode']][k][-1]:+.1f} %")
        rows.append(f"| {r['model']} | {r['mode']} | {r['sim']:.3f} | {r['published']:g} | {err:+.1f} % | "
                    f"{cells[0]} | {cells[1]} | {r['dominant']} | {r['top']} |")
    summary = ["", "| mode | models simulated | mean absolute error | worst | LOO mean absolute error | LOO worst "
               "| LOFO mean absolute error | LOFO worst |", "|---|---|---|---|---|---|---|---|"]
    for mode, (errs, loo_errs, lofo_errs) in errors.items():
        worst = lambda e: f"{max(abs(x) for x in e):.1f} %" if e else "-"  # noqa: E731
        summary.append(f"| {mode} | {len(errs)} of {model_counts[mode]} | {mape(errs)} | {worst(errs)} | "
                       f"{mape(loo_errs)} | {worst(loo_errs)} | {mape(lofo_errs)} | {worst(lofo_errs)} |")
    return "\n".join(rows + summary)


def work_table(results):
    """The work report of each simulated row (per batch, work_report) beside its time per image."""
    lines = ["| model | mode | simulated ms | published ms | layer groups (ops) | global ops | TIU / GDMA commands "
             "| TIU / GDMA busy ms | TIU GMAC | DDR MB read: weights + activations | DDR MB written "
             "| MACs per DDR byte | cast / requant / move (share of busy time) |", "|---" * 13 + "|"]
    for r in results:
        if "report" not in r:
            continue
        w, b = r["report"], r["work"]
        intensity = w["tiu_gmac"] * 1e3 / (w["weight_mb"] + w["activation_mb"] + w["written_mb"])
        conversions = " / ".join(f"{n} ({share * 100:.1f} %)" if n else "0" for n, share in w["conversions"].values())
        lines.append(f"| {r['model']} | {r['mode']} | {r['sim']:.3f} | {r['published']:g} | {w['layer_groups']} "
                     f"({w['grouped_ops']}) | {w['global_ops']} | {w['tiu_commands']} / {w['gdma_commands']} | "
                     f"{b['tiu_ms']:.2f} / {b['gdma_ms']:.2f} | {w['tiu_gmac']:.2f} | {w['weight_mb']:.1f} + "
                     f"{w['activation_mb']:.1f} | {w['written_mb']:.1f} | {intensity:.0f} | {conversions} |")
    return "\n".join(lines)


def check_work_report(results):
    """The bmodel's command counts (work_report, from `tpuc dis --work`) are the ones the simulator ran."""
    for r in results:
        if "report" in r and (r["report"]["tiu_commands"], r["report"]["gdma_commands"]) != \
                (r["work"]["tiu_commands"], r["work"]["gdma_commands"]):
            sys.exit(f"validate_latency: error: {r['model']} {r['mode']}: tpuc dis --work counts "
                     f"{r['report']['tiu_commands']} / {r['report']['gdma_commands']} commands, tpuc sim ran "
                     f"{r['work']['tiu_commands']} / {r['work']['gdma_commands']}")


def cause_stages(fit_timing, results, work):
    """Adds the candidate causes one at a time from main's model before this fit (NEUTRAL), refitting the
    fitted parameters introduced so far, and tabulates the mean absolute error per mode after each."""
    manifest = write_manifest(results, work)
    config, params = dict(NEUTRAL), []
    lines = ["| cause added | parameters | FP32 b1 | INT8 b1 | INT8 b4 | all rows |", "|---|---|---|---|---|---|"]
    for cause, sourced, fitted in CAUSES:
        config.update(sourced)
        for name, _, _ in fitted:
            config.pop(name, None)  # the fit starts from the default
        params += fitted
        path = os.path.join(work, "stage.json")
        with open(path, "w") as f:
            json.dump(config, f)
        fit = run_fit(fit_timing, manifest, path, params, loo=False)
        config.update(fit.get("fitted", {}))
        for name, _, _ in [p for p in fitted if p in DROPPED]:
            config[name] = NEUTRAL[name]
        params = [p for p in params if p not in DROPPED]
        per_mode = {mode: [] for mode, _, _ in MODES}
        for row in fit["rows"]:
            per_mode[row["mode"]].append(error_pct(row["simulated_ms"], row["published_ms"]))
        values = ", ".join(f"{k} = {v:g}" for k, v in list(sourced.items()) + list(fit.get("fitted", {}).items()))
        lines.append(f"| {cause} | {values or '-'} | " + " | ".join(mape(per_mode[m]) for m, _, _ in MODES)
                     + f" | {mape(sum(per_mode.values(), []))} |")
        print(lines[-1], flush=True)
    return "\n".join(lines)


# fit_timing's counterfactual overlaps (perf/TimingFit.cpp): what a compiler that overlaps more could reach.
OVERLAPS = (("compiled", "as compiled (the bmodels' cmd-id schedules)"),
            ("prefetch", "each command group's weight loads in the previous group's GDMA idle time"),
            ("group", "each command group's engines perfectly overlapped"),
            ("program", "the two engines perfectly overlapped over the whole program"))


def overlap_bounds(fit_timing, results, work, config=None):
    """Refits FITTED, with the leave-one-out fits, under each overlap of OVERLAPS, and tabulates the mean
    absolute and worst error per mode in sample and left out: whether more overlap could meet the targets."""
    manifest, path = write_manifest(results, work), config_file(work, config)
    lines = ["| overlap | objective | FP32 b1 | INT8 b1 | INT8 b4 | rows beyond 25 % | worst row |",
             "|---|---|---|---|---|---|---|"]
    for name, what in OVERLAPS:
        fit = run_fit(fit_timing, manifest, path, FITTED, overlap=name)
        cells, beyond, worst = [], [0, 0], (0, "")
        for mode, _, _ in MODES:
            rows = [r for r in fit["rows"] if r["mode"] == mode]
            err = [error_pct(r["simulated_ms"], r["published_ms"]) for r in rows]
            loo = [error_pct(r["loo_ms"], r["published_ms"]) for r in rows]
            cells.append(f"{mape(err)} / {mape(loo)}")
            beyond[0] += sum(abs(e) > 25 for e in err)
            beyond[1] += sum(abs(e) > 25 for e in loo)
            for r, e in zip(rows, loo):
                if abs(e) > abs(worst[0]):
                    worst = (e, f"{r['model']} {mode}")
        lines.append(f"| {what} | {fit['objective']:.3f} | " + " | ".join(cells)
                     + f" | {beyond[0]} / {beyond[1]} | {worst[1]} {worst[0]:+.1f} % left out |")
        print(lines[-1], flush=True)
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tpuc", default=os.path.join(ROOT, "build", "tools", "tpuc", "tpuc"))
    ap.add_argument("--work", default=os.path.join(ROOT, "build-validate", "latency"))
    ap.add_argument("--models", default="")
    ap.add_argument("--quick", action="store_true",
                    help=f"only {', '.join(QUICK)}, no fit, no doc; checks fit_timing prices what tpuc sim simulates (CI)")
    ap.add_argument("--check", action="store_true",
                    help=f"only {', '.join(QUICK)}, no fit: exit 1 when a cell differs from docs/validation.md's")
    ap.add_argument("--no-doc", action="store_true")
    ap.add_argument("--reuse-calibration", action="store_true",
                    help="keep the INT8 calibration tables of an earlier run in --work")
    ap.add_argument("--reuse-bmodels", action="store_true",
                    help="re-simulate the bmodels of an earlier run in --work (timing changes only); "
                         "never calibrates")
    ap.add_argument("--config", help="hardware config JSON for tpuc sim (default: BM1684's defaults)")
    ap.add_argument("--fit-timing", default=os.path.join(ROOT, "build", "perf", "fit_timing"))
    ap.add_argument("--no-fit", action="store_true", help="no parameter fit and no leave-one-out column")
    ap.add_argument("--stages", action="store_true",
                    help="also refit cause by cause and rewrite docs/timing.md's table of what each did")
    args = ap.parse_args()
    args.quick = args.quick or args.check
    writes_doc = not (args.no_doc or args.quick)
    stamp = provenance.stamp_or_exit("latency-set") if writes_doc else None
    reuse_from_work(args)
    names = list(QUICK) if args.quick else [m for m in args.models.split(",") if m] or list(PUBLISHED)
    published_of = {**PUBLISHED, **UNCERTAIN}
    unknown = [m for m in names if m not in published_of]
    if unknown:
        sys.exit(f"validate_latency: error: unknown model(s) {', '.join(unknown)}")
    missing = [m for m in names if not os.path.exists(os.path.join(MODELS, f"{m}_b4.onnx"))]
    if missing:
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "models", "latency", "export.py"),
                        "--models", ",".join(missing), "--out", MODELS], check=True)
    os.makedirs(args.work, exist_ok=True)
    results, failed = [], []
    for model in names:
        for (mode, quantize, batch), published in zip(MODES, published_of[model]):
            if published is None:
                continue  # not published: no row
            r = {"model": model, "mode": mode, "batch": batch, "published": published}
            try:
                stats, r["bmodel"] = simulate(args.tpuc, model, quantize, batch, args.work, args.reuse_calibration,
                                              args.reuse_bmodels, args.config)
                r["sim"], r["dominant"], r["top"], r["work"] = summarize(stats, batch)
                r["report"] = work_report(args.tpuc, stats, r["bmodel"])
            except RuntimeError as e:
                failed.append(f"{model} {mode}: {e}")
                r["error"] = str(e)
            results.append(r)
            print(f"{model} {mode}: " + (f"{r['sim']:.3f} ms vs {published:g}" if "sim" in r else r["error"]),
                  flush=True)
    if args.quick and failed:
        sys.exit("validate_latency: error: the quick set must compile: " + "; ".join(failed))
    if args.quick:
        check_fit_prices_the_simulation(args.fit_timing, results, args.work, args.config)
        check_work_report(results)
    fit = None if args.quick or args.no_fit else fit_parameters(args.fit_timing, results, args.work, args.config)
    published_counts = {mode: sum(published_of[m][i] is not None for m in names) for i, (mode, _, _) in enumerate(MODES)}
    table, report = latency_table(results, fit, published_counts), work_table(results)
    print(table + "\n\n" + report)
    if args.check:
        sys.exit(check_committed(table, report))
    if not writes_doc:
        return
    stages = cause_stages(args.fit_timing, results, args.work) if fit and args.stages else None
    bounds = overlap_bounds(args.fit_timing, results, args.work, args.config) if stages else None
    provenance.confirm_or_exit(stamp, "latency-set")
    points = [(r["model"], r["mode"], r["sim"], r["published"]) for r in results if "sim" in r]
    if points:
        scatter(points, SVG, stamp)
    provenance.write_block("latency-set", table, [stamp.line("latency-set")])
    provenance.write_block("work-report", report, [stamp.line("work-report")])
    if stages:
        provenance.write_block("timing-causes", stages, [stamp.line("timing-causes")])
        provenance.write_block("overlap-bounds", bounds, [stamp.line("overlap-bounds")])


def reuse_from_work(args):
    """--reuse-*: only products of a commit after which nothing the tables measure changed (provenance.json in
    --work); a run that makes them afresh records its commit there (or removes the record when the code is
    not a commit's)."""
    if args.reuse_bmodels or args.reuse_calibration:
        try:
            provenance.check_reuse(args.work, "latency-set")
        except provenance.ProvenanceError as e:
            sys.exit(f"validate_latency: error: {e}")
        return
    try:
        provenance.record_work(args.work, provenance.stamp("latency-set"))
    except provenance.ProvenanceError:
        record = os.path.join(args.work, "provenance.json")
        if os.path.exists(record):
            os.remove(record)


def check_committed(table, report):
    """Exit status of --check: 1 when a quick-set cell differs from the committed one (the per-row tables: the
    summary over modes needs every model)."""
    with open(DOC) as f:
        doc = f.read()
    rows, _summary = table.split("\n\n")
    lines = []
    for table_id, fresh in (("latency-set", rows), ("work-report", report)):
        lines += provenance.compare_tables("docs/validation.md", table_id, provenance.block_of(doc, table_id) or "",
                                           fresh, keys=2)
    for line in lines:
        print(line)
    print(f"validate_latency --check: {', '.join(QUICK)}: " + ("differs from" if lines else "reproduces")
          + " the committed table")
    return 1 if lines else 0


if __name__ == "__main__":
    main()

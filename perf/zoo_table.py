#!/usr/bin/python3
"""Compile every zoo model (models/zoo.py) for BM1684 and write the table in docs/models.md.

    /usr/bin/python3 perf/zoo_table.py --tpuc build/tools/tpuc/tpuc [--models ci|all|NAME,...]
                                       [--timeout 1200] [--work DIR] [--doc docs/models.md]
                                       [--results perf/zoo_results.json]

Per model: `tpuc import`, the Top interpreter against onnxruntime, `tpuc deploy --quantize
F32`, `tpuc calibrate` on the 8 samples + `deploy --quantize INT8`, and each bmodel on
`--backend func` and `--backend sim --stats` (latency, LMEM peak; func and sim must give
the same bytes; the INT8 bmodel's func outputs must equal the Tpu interpreter's bit for
bit). A step that fails records its one-line error (`no lowering for ...`) and the rest
of that precision is skipped; INT8 (calibration is the slow step) is only tried when F32
deploys. Every tpuc step has a time limit (--timeout).

Results are kept per model in --results (committed with the table), so the heavy models
can be measured later with --models NAME and the table is regenerated from everything
measured; it lists every zoo model, the ones never measured as such. Build files go to
--work (default models/out/zoo/table/, with each model's tpuc log).

Each model's result records the commit, date and command that measured it (perf/provenance.py);
when the rows come from different runs each row's model carries its run's key ([a], [b], ...)
and the table one provenance line per key. It refuses to measure when the code the table
measures has uncommitted changes. --check NAME measures one model without writing anything
and exits 1 when a cell of its row differs from the committed table (the deploy wall times,
not deterministic, are not compared).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

import numpy as np
import onnx

import provenance

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "models"))
import inputs  # noqa: E402
import zoo  # noqa: E402

DEPLOY_TIMES = "F32 / INT8 deploy (s)"


class StepFailed(Exception):
    pass


def tpuc(args, cmd, log):
    """Run one tpuc step; its wall time, or StepFailed with the error line."""
    t0 = time.time()
    try:
        r = subprocess.run([args.tpuc] + cmd, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        raise StepFailed(f"tpuc {cmd[0]}: no result within {args.timeout} s")
    seconds = time.time() - t0
    with open(log, "a") as f:
        f.write(f"$ tpuc {' '.join(cmd)}  ({seconds:.1f} s, exit {r.returncode})\n{r.stdout}{r.stderr}\n")
    if r.returncode != 0:
        lines = [ln for ln in r.stderr.splitlines() if ln.strip()] or [f"exit {r.returncode}"]
        line = ([ln for ln in lines if "no lowering for" in ln] or lines)[-1].strip()
        # "tpuc deploy: error: <file>: no lowering for ..." -> "no lowering for ..."
        raise StepFailed(re.sub(r"^tpuc \w+: error: \S+: ", "", line))
    return seconds


def load(path):
    with np.load(path) as z:
        return {k: z[k] for k in z.files}


def same_bytes(a, b):
    return sorted(a) == sorted(b) and all(a[k].dtype == b[k].dtype and a[k].tobytes() == b[k].tobytes()
                                          for k in a)


def min_cosine(got, ref):
    """The worst cosine over the outputs both files have (by name)."""
    common = [k for k in ref if k in got]
    if not common:
        raise StepFailed(f"no common outputs: {sorted(got)} vs {sorted(ref)}")
    return min(inputs.cosine(got[k], ref[k]) for k in common)


def op_types(onnx_path):
    return sorted({n.op_type for n in onnx.load(onnx_path, load_external_data=False).graph.node})


def top_ops(top_mlir):
    """The Top dialect ops the importer made, the names the back end's errors use."""
    with open(top_mlir) as f:
        return sorted(set(re.findall(r'"(top\.\w+)"\(', f.read())))


def run_precision(args, name, quant, top, work, log, fp32_ref):
    """deploy + func + sim for one precision; a dict of what was measured."""
    res = {}
    bmodel = os.path.join(work, f"{name}_{quant.lower()}.bmodel")
    deploy = ["deploy", top, "--quantize", quant, "-o", bmodel]
    try:
        if quant == "INT8":
            cali = os.path.join(work, f"{name}.cali")
            # The reference compiler's per-tensor scheme: the zoo measures coverage, latency and bit-exactness
            # on untrained exports, whose INT8 cosine says little (docs/quantization.md judges the recipe).
            res["calibrate_s"] = round(tpuc(args, ["calibrate", top, "--dataset", os.path.join(args.out, "cali", name),
                                                   "--int8-recipe", "none", "-o", cali], log), 1)
            deploy += ["--calibration-table", cali]
        res["deploy_s"] = round(tpuc(args, deploy, log), 1)
        inp = os.path.join(args.out, f"{name}_in.npz")
        func_out, sim_out = (os.path.join(work, f"{name}_{quant.lower()}_{b}.npz") for b in ("func", "sim"))
        tpuc(args, ["run", bmodel, "-i", inp, "-o", func_out, "--backend", "func"], log)
        res["cosine"] = round(min_cosine(load(func_out), fp32_ref), 6)
        if quant == "INT8":  # the bmodel must compute what the Tpu interpreter does, bit for bit
            tpu_out = os.path.join(work, f"{name}_int8_tpu.npz")
            tpuc(args, ["run", bmodel.replace(".bmodel", ".tpu.mlir"), "-i", inp, "-o", tpu_out], log)
            res["equals_tpu_interpreter"] = same_bytes(load(func_out), load(tpu_out))
        stats = os.path.join(work, f"{name}_{quant.lower()}_stats.json")
        res["sim_wall_s"] = round(tpuc(args, ["run", bmodel, "-i", inp, "-o", sim_out, "--backend", "sim",
                                              "--stats", stats], log), 1)
        with open(stats) as f:
            s = json.load(f)
        res["latency_ms"] = round(s["time_us"] / 1000, 3)
        res["lmem_peak_bytes"] = s["lmem_peak_bytes"]
        res["func_equals_sim"] = same_bytes(load(func_out), load(sim_out))
    except StepFailed as e:
        res["error"] = str(e)
    return res


def run_model(args, name):
    work = os.path.join(args.work, name)
    os.makedirs(work, exist_ok=True)
    log = os.path.join(work, "log.txt")
    open(log, "w").close()
    onnx_path = os.path.join(args.out, f"{name}.onnx")
    if not os.path.isfile(os.path.join(args.out, f"{name}.stamp")):  # written last: a complete export
        return {"error": f"not exported: models/zoo.py --models {name} refused it or was not run"}
    _, _, size, ci = zoo.ZOO[name]
    res = {"ops": op_types(onnx_path), "input": size, "ci": ci,
           "stamp_sha256": inputs.file_sha256(os.path.join(args.out, f"{name}.stamp"))}
    ref = load(os.path.join(args.out, f"{name}_ort_out.npz"))
    top = os.path.join(work, f"{name}.top.mlir")
    try:
        res["import_s"] = round(tpuc(args, ["import", onnx_path, "-o", top], log), 1)
        top_out = os.path.join(work, f"{name}_top.npz")
        res["top_s"] = round(tpuc(args, ["run", top, "-i", os.path.join(args.out, f"{name}_in.npz"),
                                         "-o", top_out], log), 1)
        res["top_ops"] = top_ops(top)
        res["top_cosine"] = round(min_cosine(load(top_out), ref), 6)
    except StepFailed as e:
        res["error"] = str(e)
        return res
    res["F32"] = run_precision(args, name, "F32", top, work, log, ref)
    if "deploy_s" in res["F32"]:  # calibrating takes long: only when the back end takes the model
        res["INT8"] = run_precision(args, name, "INT8", top, work, log, ref)
    return res


def fmt(value, spec="", missing="–"):
    return missing if value is None else format(value, spec)


def run_stamp(result):
    return provenance.Stamp.from_json(result["provenance"]) if "provenance" in result else None


def table(results):
    """The table's text (rows, op types, provenance lines)."""
    keys = provenance.Keys([s for s in map(run_stamp, results.values()) if s])
    rows = [f"| model | input | F32 latency (ms) | INT8 latency (ms) | {DEPLOY_TIMES} | Top vs ORT | "
            "F32 vs ORT | INT8 vs fp32 | LMEM peak F32 / INT8 (KiB) | status |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for name, (_, _, size, ci) in zoo.ZOO.items():
        r = results.get(name)
        label = f"`{name}`" + ("" if ci else " †") + (keys.mark(run_stamp(r)) if r else "")
        if r is None:
            rows.append(f"| {label} | {size} | | | | | | | | not run yet |")
            continue
        f32, i8 = r.get("F32", {}), r.get("INT8", {})
        kib = lambda p: fmt(p.get("lmem_peak_bytes") and p["lmem_peak_bytes"] / 1024, ".0f")  # noqa: E731
        errors = [r["error"]] if "error" in r else []
        errors += [f"{q}: {p['error']}" for q, p in (("F32", f32), ("INT8", i8)) if "error" in p]
        if "error" in f32:
            errors.append("INT8 not tried")
        errors += [f"{q}: func and sim outputs differ" for q, p in (("F32", f32), ("INT8", i8))
                   if p.get("func_equals_sim") is False]
        if i8.get("equals_tpu_interpreter") is False:
            errors.append("INT8: bmodel and Tpu interpreter differ")
        status = "; ".join(re.sub(r" at loc\(.*?\)", "", e).replace("|", "\\|") for e in errors) or \
            "deploys; INT8 = Tpu interpreter, sim = func"
        rows.append(f"| {label} | {size} | {fmt(f32.get('latency_ms'), '.3f')} | {fmt(i8.get('latency_ms'), '.3f')} "
                    f"| {fmt(f32.get('deploy_s'), '.1f')} / {fmt(i8.get('deploy_s'), '.1f')} "
                    f"| {fmt(r.get('top_cosine'), '.6f')} | {fmt(f32.get('cosine'), '.6f')} "
                    f"| {fmt(i8.get('cosine'), '.4f')} | {kib(f32)} / {kib(i8)} | {status} |")
    rows += ["", "Op types per model: the ONNX graph's, then the Top ops `tpuc import` makes of them:", ""]
    rows += [f"- `{name}`: {', '.join(results[name].get('ops', []))}; Top: "
             f"{', '.join(o[4:] for o in results[name].get('top_ops', [])) or '–'}"
             for name in zoo.ZOO if name in results]
    return "\n".join(rows), keys.lines("zoo")


def check_committed(doc, name, result):
    """Exit status of --check: 1 when a cell of `name`'s fresh row differs from the committed table's."""
    with open(doc) as f:
        committed = provenance.block_of(f.read(), "zoo") or ""
    lines = table({name: result})[0].splitlines()
    fresh = "\n".join(lines[:2] + [l for l in lines if l.startswith(f"| `{name}`")])
    diffs = provenance.compare_tables(os.path.relpath(doc, ROOT), "zoo", committed, fresh, ignore=(DEPLOY_TIMES,))
    for line in diffs:
        print(line)
    print(f"zoo_table --check {name}: " + ("differs from" if diffs else "reproduces") + " the committed row")
    return 1 if diffs else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tpuc", required=True)
    p.add_argument("--models", default="ci", help="ci, all or comma-separated zoo names")
    p.add_argument("--out", default=os.path.join(ROOT, "models", "out", "zoo"), help="models/zoo.py's --out")
    p.add_argument("--work", default=None, help="default: <out>/table")
    p.add_argument("--timeout", type=int, default=1200, help="seconds per tpuc step")
    p.add_argument("--doc", default=os.path.join(ROOT, "docs", "models.md"))
    p.add_argument("--results", default=os.path.join(HERE, "zoo_results.json"))
    p.add_argument("--check", metavar="NAME", help="measure NAME only, write nothing, compare with the doc's row")
    args = p.parse_args()
    args.work = args.work or os.path.join(args.out, "table")
    os.makedirs(args.work, exist_ok=True)
    if args.check:
        sys.exit(check_committed(args.doc, args.check, run_model(args, args.check)))
    stamp = provenance.stamp_or_exit("zoo")
    results_path = args.results
    results = {}
    if os.path.isfile(results_path):
        with open(results_path) as f:
            results = json.load(f)
    for name in zoo.names_of(args.models):
        t0 = time.time()
        results[name] = dict(run_model(args, name), provenance=stamp.to_json())
        print(f"{name}: {time.time() - t0:.0f} s: {json.dumps(results[name])}", flush=True)
        provenance.confirm_or_exit(stamp, "zoo")
        with open(results_path, "w") as f:
            json.dump(results, f, indent=1, sort_keys=True)
        body, stamp_lines = table(results)
        provenance.write_block("zoo", body, stamp_lines, path=args.doc)


if __name__ == "__main__":
    main()

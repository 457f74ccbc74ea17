#!/usr/bin/python3
"""Chip-path conformance on the ONNX node tests (libonnx-testdata).

Every float case (float inputs; float or integer outputs) under
/usr/share/libonnx-testdata/data/node is imported
(`tpuc import`) and run on the Top interpreter (`tpuc run`). Each case that
matches its expected outputs there also goes through
`tpuc deploy --quantize F32` and `tpuc run --backend func`, and must match
the expected outputs again (|got - want| <= 1e-4 + 1e-3 |want|).

Graph inputs that are weights to a compiler (the non-first inputs of Conv,
ConvTranspose, Gemm, MatMul, PRelu and BatchNormalization) become
initializers of a rewritten copy of the model; so do attribute-like inputs
(shapes, axes, pads) when the importer asks for a constant, as in
tests/interp/ConformanceTest.cpp.

Outcome of each case that passes on the Top interpreter:
  pass      the bmodel matches;
  excluded  deploy fails with the one-line `no lowering for ...` error
            (exit 2) and the case is listed in exclusions.txt;
  wrong     the bmodel runs and computes something else: always a failure;
  failure   anything else: an unlisted `no lowering`, a listed case that
            passes now, another deploy or run error.

The shard's counts (cases considered, skipped as not float or not imported,
failing on the Top interpreter, passing, excluded) must equal its line in
expected-counts.txt: an importer regression that turns passing cases into
skips fails here instead of shrinking the suite. After a deliberate change,
rewrite the line with --update-counts and say why in the commit.

With --runtime-weights the cases that have such weight inputs, or integer
index inputs, run again with them as runtime inputs (only what the importer
asks to be constant is frozen): the chip path on activation operands (a gemm
or conv whose weight is computed) and on indices given at run time (int64
arrays fed to the bmodel's int32 inputs). It prints the outcomes and each no-lowering reason with its
count; the exclusions and the pinned counts do not apply: a wrong result, an
error, or fewer passing cases than --min-pass fail.

With --no-cpu-subnets every case deploys as a chip-only model: the host ops
(TopK, ArgMax, casts, gathers, NMS...) are refused with the one-line
no-lowering error, and the chip-only count is reported; a wrong result or an
error fails, as above.

Usage: chip_conformance.py --tpuc PATH [--shard I/N] [--jobs J] [--work-dir DIR] [--verbose]
                           [--update-counts | --runtime-weights | --no-cpu-subnets] [case ...]
Exit 0 when there is no wrong result, no failure and the counts are the pinned
ones, 1 otherwise, 2 when the test data is not installed (a failure: CI
installs libonnx-testdata).
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

DATA_DIR = "/usr/share/libonnx-testdata/data/node"
HERE = os.path.dirname(os.path.abspath(__file__))
RTOL, ATOL = 1e-3, 1e-4
# Ops whose non-first inputs are weights (filters, biases, slopes, the batch
# norm statistics): constants, as a compiler sees them.
WEIGHT_OPS = {"Conv", "ConvTranspose", "Gemm", "MatMul", "PRelu", "BatchNormalization"}
FLOAT = onnx.TensorProto.FLOAT
OUTPUT_TYPES = (FLOAT, onnx.TensorProto.INT64, onnx.TensorProto.INT32)
INDEX_TYPES = (onnx.TensorProto.INT64, onnx.TensorProto.INT32)
NO_LOWERING = re.compile(r"^tpuc deploy: error: [^:]*: no lowering for ")
COUNTS = ("considered", "skip", "top-fail", "pass", "excluded")


def read_exclusions(path):
    """Case name -> reason; problems for lines without a reason."""
    excluded, problems = {}, []
    with open(path) as f:
        for line_no, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, _, reason = line.partition("#")
            name, reason = name.strip(), reason.strip()
            if not reason:
                problems.append(f"{path}:{line_no}: '{name}' has no reason")
            excluded[name] = reason
    return excluded, problems


def read_counts(path):
    """'I/N' -> {count: value} of expected-counts.txt (lines `shard I/N considered=.. skip=.. ...`)."""
    pinned = {}
    with open(path) as f:
        for line in f:
            fields = line.split("#")[0].split()
            if len(fields) == 2 + len(COUNTS) and fields[0] == "shard":
                pinned[fields[1]] = {k: int(v) for k, v in (x.split("=") for x in fields[2:])}
    return pinned


def write_counts(path, shard, counts):
    """Replaces (or adds) the shard's line of expected-counts.txt."""
    with open(path) as f:
        lines = f.read().splitlines()
    line = f"shard {shard} " + " ".join(f"{k}={counts[k]}" for k in COUNTS)
    lines = [l for l in lines if not l.startswith(f"shard {shard} ")] + [line]
    head = [l for l in lines if not l.startswith("shard ")]
    with open(path, "w") as f:
        f.write("\n".join(head + sorted(l for l in lines if l.startswith("shard "))) + "\n")


def read_tensor(path):
    """(TensorProto, array); the array is None when the file holds no tensor
    (a sequence or optional value parses as a meaningless TensorProto)."""
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    try:
        return t, numpy_helper.to_array(t)
    except (ValueError, TypeError):
        return t, None


def test_sets(case_dir):
    """[(inputs, outputs)] per test_data_set_*: lists of (TensorProto, array)."""
    sets = []
    for d in sorted(e for e in os.listdir(case_dir) if e.startswith("test_data_set_")):
        files = os.listdir(os.path.join(case_dir, d))
        def load(prefix):
            n = sum(1 for f in files if f.startswith(prefix) and f.endswith(".pb"))
            return [read_tensor(os.path.join(case_dir, d, f"{prefix}{i}.pb")) for i in range(n)]
        sets.append((load("input_"), load("output_")))
    return sets


def graph_inputs(model):
    inits = {i.name for i in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


def non_first_inputs(model, ops=None):
    """Graph inputs used only at a non-first position (of a node of `ops`)."""
    names = {i.name for i in graph_inputs(model)}
    data, attr = set(), set()
    for node in model.graph.node:
        for pos, name in enumerate(node.input):
            if name not in names:
                continue
            (attr if pos > 0 and (ops is None or node.op_type in ops) else data).add(name)
    return attr - data


def freeze(model, frozen, values):
    """A copy of `model` with the graph inputs in `frozen` as initializers."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    keep = [i for i in m.graph.input if i.name not in frozen]
    del m.graph.input[:]
    m.graph.input.extend(keep)
    for name in sorted(frozen):
        t = onnx.TensorProto()
        t.CopyFrom(values[name])
        t.name = name
        m.graph.initializer.append(t)
    return m


def mismatch(got, want):
    """Empty when `got` matches `want`, else what differs."""
    if got.shape != want.shape:
        return f"shape {list(got.shape)} vs expected {list(want.shape)}"
    g, w = got.astype(np.float64), want.astype(np.float64)
    bad = ~((np.abs(g - w) <= ATOL + RTOL * np.abs(w)) | (np.isnan(g) & np.isnan(w)) | (g == w))
    if not bad.any():
        return ""
    i = int(np.flatnonzero(bad)[0])
    return f"{int(bad.sum())} of {bad.size} elements differ, first [{i}]: {g.flat[i]:g} vs expected {w.flat[i]:g}"


def run(cmd):
    """(exit code, stderr lines) of a failed command, (0, []) on success."""
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stderr.strip().splitlines() if p.returncode else []


def compare_outputs(npz_path, model, outputs):
    got = np.load(npz_path)
    for (_, want), out in zip(outputs, model.graph.output):
        if out.name not in got:
            return f"output '{out.name}' not produced"
        diff = mismatch(got[out.name], want)
        if diff:
            return f"output '{out.name}': {diff}"
    return ""


def run_case(tpuc, case_dir, work, runtime_weights=False, chip_only=False, chip="bm1684", quantize="F32"):
    """(status, detail): status is 'skip' (not a float case, or the importer
    lacks an op), 'top-fail', 'pass', 'no-lowering', 'wrong' or 'error'. F32: the bmodel's outputs
    against the node test's; F16 and BF16: the bmodel's against the Tpu interpreter's, bit for bit."""
    model = onnx.load(os.path.join(case_dir, "model.onnx"))
    sets = test_sets(case_dir)
    if not sets:
        return "skip", "no test_data_set_*"
    inputs = graph_inputs(model)
    values = {i.name: t for i, (t, _) in zip(inputs, sets[0][0])}
    if len(values) != len(inputs) or any(len(o) != len(model.graph.output) for _, o in sets):
        return "skip", "test data does not match the model's inputs/outputs"
    if any(a is None for ins, outs in sets for _, a in ins + outs):
        return "skip", "test data that is not a tensor"
    # A float case: every input that may stay an input is f32, every output f32
    # or an integer tensor (indices of TopK, ArgMax; casts), which the host
    # computes in a CPU sub-net.
    maybe_data = [i for i in inputs if i.name not in non_first_inputs(model)]
    if any(values[i.name].data_type != FLOAT for i in maybe_data) or any(
        t.data_type not in OUTPUT_TYPES for _, outs in sets for t, _ in outs
    ):
        return "skip", "not a float case"
    frozen = non_first_inputs(model, WEIGHT_OPS)
    indices = {i.name for i in inputs
               if i.name in non_first_inputs(model) and values[i.name].data_type in INDEX_TYPES}
    if runtime_weights:
        if not frozen and not indices:
            return "skip", "no weight or index input (the pinned suite runs it as it is)"
        frozen = set()
    else:
        # Integer inputs after the first (indices of Gather*, Scatter*) are
        # constants of the model: the bmodel's graph inputs are float.
        frozen |= indices
    mlir = os.path.join(work, "model.top.mlir")

    def imported(frozen):
        path = os.path.join(work, "model.onnx")
        onnx.save(freeze(model, frozen, values), path)
        shapes = [list(values[i.name].dims) for i in inputs if i.name not in frozen]
        rc, err = run([tpuc, "import", path, "--input-shapes", str(shapes).replace(" ", ""), "-o", mlir])
        return rc, "\n".join(err)

    rc, err = imported(frozen)
    # Asked for a constant, or an empty attribute input (axes []) that
    # --input-shapes cannot give.
    wants_constant = "must be a constant" in err or "must be constants" in err or "--input-shapes" in err
    if rc and wants_constant and non_first_inputs(model) - frozen:
        frozen |= non_first_inputs(model)
        rc, err = imported(frozen)
    if rc:
        return ("skip" if "unsupported ONNX ops" in err else "top-fail"), err
    # Index inputs stay int64 graph inputs with --runtime-weights (int32 tensors of the bmodel).
    runtime_types = (FLOAT,) + (INDEX_TYPES if runtime_weights else ())
    if any(values[i.name].data_type not in runtime_types or (values[i.name].data_type != FLOAT and i.name not in indices)
           for i in inputs if i.name not in frozen):
        return "skip", "not a float case"

    feeds = []
    for k, (ins, outs) in enumerate(sets):
        feed = os.path.join(work, f"in{k}.npz")
        np.savez(feed, **{i.name: a for i, (_, a) in zip(inputs, ins) if i.name not in frozen})
        feeds.append((feed, outs))
    for k, (feed, outs) in enumerate(feeds):
        out = os.path.join(work, f"top{k}.npz")
        rc, err = run([tpuc, "run", mlir, "--input", feed, "-o", out, "--threads", "1"])
        detail = "\n".join(err) if rc else compare_outputs(out, model, outs)
        if detail:
            return "top-fail", detail

    bmodel = os.path.join(work, "model.bmodel")
    rc, err = run([tpuc, "deploy", mlir, "--quantize", quantize, "--chip", chip, "-o", bmodel] +
                  (["--no-cpu-subnets"] if chip_only else []))
    if rc:
        # One line: tpuc deploy: error: <model>: no lowering for <op> '<name>' at <loc>: <why>
        if rc == 2 and len(err) == 1 and NO_LOWERING.match(err[0]):
            return "no-lowering", err[0].split(": ", 3)[-1]
        # The BM1684X code generator's refusal, its last line (after the Tpu module was written) ending "(the
        # BM1684X compiler does not compile it yet)"; the reason is counted with the names left out.
        hit = re.match(r"^tpuc deploy: error: (.*) \(the BM1684X compiler does not compile it yet\)$", err[-1]) if err else None
        if hit:
            return "not-compiled", re.sub(r"'[^']*'", "'.'", hit.group(1))
        return "error", f"deploy exit {rc}: " + " | ".join(err)
    for k, (feed, outs) in enumerate(feeds):
        out = os.path.join(work, f"chip{k}.npz")
        rc, err = run([tpuc, "run", bmodel, "--backend", "func", "--input", feed, "-o", out, "--threads", "1"])
        if rc:
            return "error", f"run --backend func exit {rc}: " + " | ".join(err)
        if quantize != "F32":
            tpu = os.path.join(work, f"tpu{k}.npz")
            rc, err = run([tpuc, "run", os.path.join(work, "model.tpu.mlir"), "--input", feed, "-o", tpu,
                           "--threads", "1"])
            if rc:
                return "error", f"run of the Tpu module exit {rc}: " + " | ".join(err)
            got, want = np.load(out), np.load(tpu)
            differ = [n for n in want.files if n not in got.files or got[n].tobytes() != want[n].tobytes()]
            if differ:
                return "wrong", f"test_data_set_{k}: {', '.join(differ)} differ from the Tpu interpreter's"
            continue
        diff = compare_outputs(out, model, outs)
        if diff:
            return "wrong", f"test_data_set_{k}: {diff}"
    return "pass", ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tpuc", required=True)
    ap.add_argument("--shard", default="0/1", help="I/N: run the cases whose index modulo N is I")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--exclusions", default=os.path.join(HERE, "exclusions.txt"))
    ap.add_argument("--work-dir", help="keep each case's files here (default: a temporary folder)")
    ap.add_argument("cases", nargs="*", help="run only these cases (default: every case of the shard)")
    ap.add_argument("--verbose", action="store_true", help="print every case's outcome")
    ap.add_argument("--counts", default=os.path.join(HERE, "expected-counts.txt"))
    ap.add_argument("--update-counts", action="store_true", help="write this shard's counts into --counts")
    ap.add_argument("--runtime-weights", action="store_true",
                    help="run the cases with weight inputs (conv, gemm, matmul, prelu, batch norm) with them as runtime "
                         "inputs and report the outcomes (no exclusions, no pinned counts)")
    ap.add_argument("--no-cpu-subnets", action="store_true",
                    help="deploy with --no-cpu-subnets (a chip-only model) and report the outcomes: host ops refused "
                         "with the one-line no-lowering error, none wrong (no exclusions, no pinned counts)")
    ap.add_argument("--chip", default="bm1684",
                    help="deploy for this chip; another than bm1684 deploys chip-only models (as --no-cpu-subnets) "
                         "and reports the outcomes (no exclusions, no pinned counts)")
    ap.add_argument("--quantize", default="F32", choices=("F32", "F16", "BF16"),
                    help="F16, BF16 (with --chip bm1684x): each bmodel against the Tpu interpreter, bit for bit")
    ap.add_argument("--min-pass", type=int, default=0,
                    help="with --runtime-weights, --no-cpu-subnets or --chip: fail when fewer cases pass on the chip "
                         "path")
    args = ap.parse_args()
    measuring = args.runtime_weights or args.no_cpu_subnets or args.chip != "bm1684" or args.quantize != "F32"
    if measuring and args.update_counts:
        print("chip_conformance: error: --runtime-weights and --no-cpu-subnets measure; they have no pinned counts "
              "to update")
        return 2
    if not os.path.isdir(DATA_DIR):
        print(f"chip_conformance: error: {DATA_DIR} is missing (Debian package libonnx-testdata)")
        return 2
    shard, shards = (int(x) for x in args.shard.split("/"))
    excluded, problems = read_exclusions(args.exclusions)
    all_cases = sorted(e for e in os.listdir(DATA_DIR) if os.path.isdir(os.path.join(DATA_DIR, e)))
    problems += [f"excluded case '{n}' does not exist" for n in excluded if n not in all_cases]
    cases = [c for k, c in enumerate(all_cases) if k % shards == shard and (not args.cases or c in args.cases)]
    problems += [f"no case '{n}'" for n in args.cases if n not in all_cases]

    work_root = args.work_dir or tempfile.mkdtemp(prefix="chip_conformance_")
    def one(case):
        work = os.path.join(work_root, case)
        os.makedirs(work, exist_ok=True)
        try:
            return case, run_case(args.tpuc, os.path.join(DATA_DIR, case), work, args.runtime_weights,
                                  args.no_cpu_subnets or args.chip != "bm1684", args.chip, args.quantize)
        except subprocess.TimeoutExpired as e:
            return case, ("error", f"timeout: {' '.join(e.cmd[:2])}")
        finally:
            if not args.work_dir:
                shutil.rmtree(work, ignore_errors=True)
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = dict(pool.map(one, cases))
    if not args.work_dir:
        shutil.rmtree(work_root, ignore_errors=True)

    if measuring:
        label = " + ".join(name for name, on in (("runtime weights", args.runtime_weights),
                                                 ("chip only", args.no_cpu_subnets),
                                                 (args.chip, args.chip != "bm1684"),
                                                 (args.quantize, args.quantize != "F32")) if on)
        return report_outcomes(label, cases, results, args.verbose, args.min_pass)
    counts = {"top": 0, "pass": 0, "excluded": 0, "wrong": 0, "considered": len(cases), "skip": 0, "top-fail": 0}
    failures = []
    for case in cases:
        status, detail = results[case]
        listed = case in excluded
        if status in ("skip", "top-fail"):
            counts[status] += 1
            if args.verbose:
                print(f"{status:12} {case}  {detail.splitlines()[0] if detail else ''}")
            if listed:
                problems.append(f"excluded case '{case}' does not pass on the Top interpreter ({detail})")
            continue
        counts["top"] += 1
        if args.verbose:
            print(f"{status:12} {case}  {detail}")
        if status == "pass":
            counts["pass"] += 1
            if listed:
                failures.append(f"LISTED-BUT-PASSES {case}: remove it from exclusions.txt")
        elif status == "no-lowering" and listed:
            counts["excluded"] += 1
        elif status == "no-lowering":
            failures.append(f"UNLISTED {case}: {detail}")
        elif status == "wrong":
            counts["wrong"] += 1
            failures.append(f"WRONG {case}: {detail}")
        else:
            failures.append(f"ERROR {case}: {detail}")
    if not args.cases:
        failures += count_changes(args, f"{shard}/{shards}", counts)
    for line in failures + problems:
        print(line)
    print(
        f"shard {shard}/{shards}: {counts['considered']} cases considered, {counts['skip']} skipped (not float or "
        f"not imported), {counts['top-fail']} fail on the Top interpreter; {counts['top']} pass on the Top interpreter, "
        f"{counts['pass']} pass on the chip path (deploy F32 + func), {counts['excluded']} excluded (no lowering), "
        f"{counts['wrong']} wrong; {len(failures)} failure(s), {len(problems)} problem(s) in the exclusion list"
    )
    return 1 if failures or problems else 0


def report_outcomes(label, cases, results, verbose, min_pass):
    """--runtime-weights, --no-cpu-subnets: the outcome counts and the no-lowering reasons (the op and why,
    names left out)."""
    outcomes, reasons, failures = {}, {}, []
    for case in cases:
        status, detail = results[case]
        outcomes[status] = outcomes.get(status, 0) + 1
        if verbose or status in ("wrong", "error"):
            print(f"{status:12} {case}  {detail.splitlines()[0] if detail else ''}")
        if status == "no-lowering":
            hit = re.match(r"no lowering for (\S+) .*?: (.*)$", detail)
            reason = f"{hit.group(1)}: {hit.group(2)}" if hit else detail
            reasons[reason] = reasons.get(reason, 0) + 1
        if status == "not-compiled":
            reasons["not compiled: " + detail] = reasons.get("not compiled: " + detail, 0) + 1
        if status in ("wrong", "error"):
            failures.append(case)
    for reason, n in sorted(reasons.items(), key=lambda kv: -kv[1]):
        print(f"{n:4} no lowering: {reason}")
    top = sum(n for k, n in outcomes.items() if k not in ("skip", "top-fail"))
    print(f"{label}: {len(cases)} cases, {outcomes.get('skip', 0)} skipped, {outcomes.get('top-fail', 0)} fail "
          f"on the Top interpreter; of the {top} that pass there, {outcomes.get('pass', 0)} pass on the chip path, "
          f"{outcomes.get('no-lowering', 0)} have no lowering, {outcomes.get('not-compiled', 0)} are not compiled for "
          f"the chip, {outcomes.get('wrong', 0)} wrong, "
          f"{outcomes.get('error', 0)} error(s)")
    if outcomes.get("pass", 0) < min_pass:
        print(f"FEWER {outcomes.get('pass', 0)} cases pass ({label}), --min-pass {min_pass}")
        failures.append("min-pass")
    return 1 if failures else 0


def count_changes(args, shard, counts):
    """One failure per count that differs from the pinned one (none after --update-counts)."""
    if args.update_counts:
        write_counts(args.counts, shard, counts)
        print(f"wrote shard {shard}'s counts into {args.counts}")
        return []
    pinned = read_counts(args.counts).get(shard)
    if pinned is None:
        return [f"COUNTS shard {shard} has no line in {args.counts} (run with --update-counts)"]
    return [f"COUNTS {k}: {counts[k]}, pinned {pinned[k]} in {os.path.basename(args.counts)} (a deliberate change: "
            f"--update-counts, and say why in the commit)" for k in COUNTS if counts[k] != pinned[k]]


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""The CI zoo models (models/zoo.py --models ci) against onnxruntime, and which deploy.

    test_zoo.py <tpuc> <repo root> [ci|all|NAME,...]   (default: ci)

Exports what is missing or stale (idempotent), then per model: `tpuc import` and the Top
interpreter must match onnxruntime's saved outputs (worst output cosine >= 0.9999).
`tpuc deploy --quantize F32` either gives a bmodel whose func-backend outputs match
onnxruntime too, or fails with exit 2 and one line (the `no lowering for ...` work queue,
printed). A model that deploys F32 is also deployed F32 for the BM1684X (chip-only): its bmodel on the
BM1684X semantics must match onnxruntime, or the deploy is refused with exit 2 (outcome pinned, x:); its F16 and
BF16 bmodels must equal the Tpu interpreter, and the BM1684X's timed simulator must equal func (F32, F16). A model that deploys F32 is also calibrated (its 8 samples) and deployed INT8:
the INT8 bmodel's func outputs must equal the Tpu interpreter's bit for bit, and for both
bmodels the timed simulator (sim) must give the same bytes as func; a model that passes on the BM1684X is also
deployed INT8 for it with that table and recipe: bit for bit with the Tpu interpreter and sim = func, or refused
with the compiler's one-line refusal (outcome pinned, x8:).
Each model's outcome (pass: every check above passed; refused: F32 deploy refused with the
one-line error) must be the one pinned in zoo-expected.txt beside this file, which also pins the CI set
(a model dropped from models/zoo.py, or moved in or out of its CI set, fails before anything runs); a CI model
(models/zoo.py) must pass: a refused deploy of a CI model, F32 or INT8, fails. A change of
outcome fails until the file is updated in the same commit, with the reason.
Exit 0 all passed, 1 a check failed, 77 skipped without node or torch."""
import os
import shutil
import subprocess
import sys
import tempfile

TPUC, ROOT = sys.argv[1], sys.argv[2]
MODELS = sys.argv[3] if len(sys.argv) > 3 else "ci"
sys.path.insert(0, os.path.join(ROOT, "models"))
MIN_COSINE = 0.9999
EXPECTED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "zoo-expected.txt")
if shutil.which("node") is None or not os.path.isdir(os.path.join(ROOT, "tools", "ort", "node_modules")):
    print("skipped: node or tools/ort/node_modules is missing (scripts/install-deps.sh installs them)")
    sys.exit(77)
try:
    import numpy as np
    import inputs
    import zoo
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)


def read_expected():
    """Model -> (pinned outcome, in the CI set) from lines `<name> pass|refused [ci]  # why`."""
    pinned = {}
    with open(EXPECTED) as f:
        for n, line in enumerate(f, 1):
            words = line.split("#")[0].split()
            if not words:
                continue
            x = next((w[2:] for w in words[2:] if w.startswith("x:")), None)
            x8 = next((w[3:] for w in words[2:] if w.startswith("x8:")), None)
            rest = [w for w in words[2:] if not w.startswith(("x:", "x8:"))]
            if words[1:2] not in (["pass"], ["refused"]) or rest not in ([], ["ci"]) or \
                    x not in ((None,) if words[1] == "refused" else ("pass", "refused")) or \
                    x8 not in (("pass", "refused") if x == "pass" else (None,)):
                sys.exit(f"{os.path.basename(EXPECTED)}:{n}: expected `<name> pass [ci] x:pass x8:pass|x8:refused`, "
                         f"`<name> pass [ci] x:refused` or `<name> refused [ci]`, got '{line.strip()}'")
            pinned[words[0]] = (words[1], rest == ["ci"], x, x8)
    return pinned


def suite_changes(pinned):
    """How zoo.py's models differ from the pinned ones: a model dropped, added or moved in or out of the
    CI set fails here, before anything runs, so the suite cannot shrink silently."""
    changes = [f"{m}: pinned in {os.path.basename(EXPECTED)} but not in models/zoo.py" for m in pinned if m not in zoo.ZOO]
    for m, (_, _, _, ci) in zoo.ZOO.items():
        if m not in pinned:
            changes.append(f"{m}: in models/zoo.py but has no pinned outcome in {os.path.basename(EXPECTED)}")
        elif pinned[m][1] != bool(ci):
            changes.append(f"{m}: {'in' if ci else 'not in'} the CI set of models/zoo.py, pinned "
                           f"{'in' if pinned[m][1] else 'out of'} it in {os.path.basename(EXPECTED)}")
    return changes


expected = read_expected()
changes = suite_changes(expected)
for c in changes:
    print(f"FAIL {c}")
if changes:
    sys.exit(1)

OUT = os.path.join(ROOT, "models", "out", "zoo")
subprocess.run([sys.executable, os.path.join(ROOT, "models", "zoo.py"), "--models", MODELS, "--out", OUT],
               check=True, stdout=subprocess.DEVNULL)


def load(path):
    with np.load(path) as z:
        return {k: z[k] for k in z.files}


def same_bytes(a, b):
    """The first output whose bytes differ, or None."""
    if sorted(a) != sorted(b):
        return f"outputs {sorted(a)} vs {sorted(b)}"
    return next((k for k in a if a[k].dtype != b[k].dtype or a[k].tobytes() != b[k].tobytes()), None)


def run(args):
    return subprocess.run([TPUC] + args, capture_output=True, text=True)


def check_sim_equals_func(name, bmodel, x, func_out, tmp, tag):
    sim_out = os.path.join(tmp, f"{name}_{tag.replace(' ', '_')}_sim.npz")
    p = run(["run", bmodel, "-i", x, "-o", sim_out, "--backend", "sim"])
    if p.returncode:
        return f"{name}: {tag} bmodel on sim exited {p.returncode}: {p.stderr.strip()}"
    diff = same_bytes(load(sim_out), load(func_out))
    print(f"{'FAIL' if diff else 'PASS'} {name}: {tag} bmodel sim == func" + (f" (differs at {diff})" if diff else ""))
    return f"{name}: {tag} bmodel sim and func differ at {diff}" if diff else None


def check_int8(name, top, x, tmp):
    """Calibrate on the model's 8 samples (the default INT8 recipe search), deploy INT8 with the table's recipe,
    compare func with the Tpu interpreter and sim."""
    cali, bmodel = os.path.join(tmp, f"{name}.cali"), os.path.join(tmp, f"{name}_int8.bmodel")
    tpu = os.path.join(tmp, f"{name}_int8.tpu.mlir")
    outs = {k: os.path.join(tmp, f"{name}_int8_{k}.npz") for k in ("tpu", "func")}
    steps = [["calibrate", top, "--dataset", os.path.join(OUT, "cali", name), "-o", cali],
             # The recipe may correct weights on samples: the ones the search read.
             ["deploy", top, "--quantize", "INT8", "--calibration-table", cali, "--calibration-data",
              os.path.join(OUT, "cali", name), "-o", bmodel],
             ["run", tpu, "-i", x, "-o", outs["tpu"]],
             ["run", bmodel, "-i", x, "-o", outs["func"], "--backend", "func"]]
    for step in steps:
        p = run(step)
        if p.returncode:
            return [f"{name}: INT8 {step[0]} exited {p.returncode}: {p.stderr.strip()}"]
    diff = same_bytes(load(outs["func"]), load(outs["tpu"]))
    print(f"{'FAIL' if diff else 'PASS'} {name}: INT8 bmodel (func) == Tpu interpreter" +
          (f" (differs at {diff})" if diff else ""))
    problems = [f"{name}: INT8 bmodel and Tpu interpreter differ at {diff}"] if diff else []
    sim = check_sim_equals_func(name, bmodel, x, outs["func"], tmp, "INT8")
    return problems + ([sim] if sim else [])


def check_bm1684x(name, top, x, ref, tmp):
    """F32 for the BM1684X (a chip-only model) on its functional semantics against onnxruntime, then F16 and
    BF16 against the Tpu interpreter bit for bit, and the timed simulator equal to func for F32 and F16:
    ('pass' | 'refused' | 'fail', the failure or None).
    Refused: the F32 deploy exits 2, its last line the compiler's error."""
    bmodel, out = os.path.join(tmp, f"{name}_bm1684x.bmodel"), os.path.join(tmp, f"{name}_bm1684x.npz")
    p = run(["deploy", top, "--quantize", "F32", "--chip", "bm1684x", "--no-cpu-subnets", "-o", bmodel])
    if p.returncode:
        last = (p.stderr.strip().splitlines() or [""])[-1]
        if p.returncode == 2 and last.startswith("tpuc deploy: error: "):
            print(f"     {name}: BM1684X F32 deploy refused: {last}")
            return "refused", None
        return "fail", f"{name}: BM1684X F32 deploy exited {p.returncode}: {p.stderr.strip()}"
    p = run(["run", bmodel, "-i", x, "-o", out, "--backend", "func"])
    c = worst_cosine(load(out), ref) if p.returncode == 0 else float("nan")
    print(f"{'PASS' if c >= MIN_COSINE else 'FAIL'} {name}: BM1684X F32 bmodel (func) vs onnxruntime cosine {c:.6f}")
    if not c >= MIN_COSINE:
        return "fail", f"{name}: BM1684X F32 bmodel vs onnxruntime cosine {c:.6f} < {MIN_COSINE} {p.stderr.strip()}"
    sim = check_sim_equals_func(name, bmodel, x, out, tmp, "BM1684X F32")
    if sim:
        return "fail", sim
    # F16 and BF16: the bmodel equals the Tpu interpreter bit for bit (deploy --test-input compares them).
    for mode in ("F16", "BF16"):
        half = os.path.join(tmp, f"{name}_bm1684x_{mode}.bmodel")
        p = run(["deploy", top, "--quantize", mode, "--chip", "bm1684x", "--no-cpu-subnets", "-o", half,
                 "--test-input", x])
        exact = p.returncode == 0 and "equal the Tpu interpreter's bit for bit" in p.stderr
        print(f"{'PASS' if exact else 'FAIL'} {name}: BM1684X {mode} bmodel (func) == Tpu interpreter")
        if not exact:
            return "fail", f"{name}: BM1684X {mode} deploy exited {p.returncode} or differs: {p.stderr.strip()[-400:]}"
    # The timed simulator computes what the functional semantics compute (F16: one of the two 16-bit modes).
    half, half_out = os.path.join(tmp, f"{name}_bm1684x_F16.bmodel"), os.path.join(tmp, f"{name}_bm1684x_F16.npz")
    p = run(["run", half, "-i", x, "-o", half_out, "--backend", "func"])
    if p.returncode:
        return "fail", f"{name}: BM1684X F16 bmodel (func) exited {p.returncode}: {p.stderr.strip()}"
    sim = check_sim_equals_func(name, half, x, half_out, tmp, "BM1684X F16")
    if sim:
        return "fail", sim
    return "pass", None


def check_bm1684x_int8(name, top, x, tmp):
    """INT8 for the BM1684X with the table and recipe check_int8 calibrated: the bmodel equals the Tpu
    interpreter bit for bit and sim equals func: ('pass' | 'refused' | 'fail', the failure or None).
    Refused: the deploy exits 2, its last line the compiler's refusal naming the op."""
    cali, bmodel = os.path.join(tmp, f"{name}.cali"), os.path.join(tmp, f"{name}_bm1684x_int8.bmodel")
    p = run(["deploy", top, "--quantize", "INT8", "--chip", "bm1684x", "--no-cpu-subnets", "--calibration-table",
             cali, "--calibration-data", os.path.join(OUT, "cali", name), "-o", bmodel, "--test-input", x])
    if p.returncode:
        last = (p.stderr.strip().splitlines() or [""])[-1]
        if p.returncode == 2 and last.startswith("tpuc deploy: error: ") and \
                last.endswith("(the BM1684X compiler does not compile it yet)"):
            print(f"     {name}: BM1684X INT8 deploy refused: {last}")
            return "refused", None
        return "fail", f"{name}: BM1684X INT8 deploy exited {p.returncode}: {p.stderr.strip()[-400:]}"
    exact = "equal the Tpu interpreter's bit for bit" in p.stderr
    print(f"{'PASS' if exact else 'FAIL'} {name}: BM1684X INT8 bmodel (func) == Tpu interpreter")
    if not exact:
        return "fail", f"{name}: BM1684X INT8 bmodel differs from the Tpu interpreter: {p.stderr.strip()[-400:]}"
    func_out = os.path.join(tmp, f"{name}_bm1684x_int8_func.npz")
    p = run(["run", bmodel, "-i", x, "-o", func_out, "--backend", "func"])
    if p.returncode:
        return "fail", f"{name}: BM1684X INT8 bmodel (func) exited {p.returncode}: {p.stderr.strip()}"
    sim = check_sim_equals_func(name, bmodel, x, func_out, tmp, "BM1684X INT8")
    return ("fail", sim) if sim else ("pass", None)


def worst_cosine(got, ref):
    if sorted(got) != sorted(ref):
        return float("nan")
    return min(inputs.cosine(got[k], ref[k]) for k in ref)


failures, deployed, refused, x_outcome, x8_outcome = [], [], [], {}, {}
with tempfile.TemporaryDirectory() as tmp:
    for name in zoo.names_of(MODELS):
        model, x = os.path.join(OUT, f"{name}.onnx"), os.path.join(OUT, f"{name}_in.npz")
        ref = load(os.path.join(OUT, f"{name}_ort_out.npz"))
        top, top_out = os.path.join(tmp, f"{name}.top.mlir"), os.path.join(tmp, f"{name}_top.npz")
        steps = [[TPUC, "import", model, "-o", top], [TPUC, "run", top, "-i", x, "-o", top_out]]
        bad = next((p for p in (subprocess.run(s, capture_output=True, text=True) for s in steps) if p.returncode), None)
        if bad:
            failures.append(f"{name}: {' '.join(bad.args[1:2])} exited {bad.returncode}: {bad.stderr.strip()}")
            continue
        c = worst_cosine(load(top_out), ref)
        print(f"{'PASS' if c >= MIN_COSINE else 'FAIL'} {name}: Top interpreter vs onnxruntime cosine {c:.6f}")
        if not c >= MIN_COSINE:
            failures.append(f"{name}: Top interpreter vs onnxruntime cosine {c:.6f} < {MIN_COSINE}")
        bmodel, func_out = os.path.join(tmp, f"{name}.bmodel"), os.path.join(tmp, f"{name}_func.npz")
        p = run(["deploy", top, "--quantize", "F32", "-o", bmodel])
        if p.returncode != 0:
            lines = p.stderr.strip().splitlines()
            print(f"     {name}: F32 deploy refused: {p.stderr.strip()}")
            refused.append(name)
            if p.returncode != 2 or len(lines) != 1:
                failures.append(f"{name}: deploy failed with exit {p.returncode} and {len(lines)} lines, "
                                "expected exit 2 and one line")
            continue
        p = run(["run", bmodel, "-i", x, "-o", func_out, "--backend", "func"])
        c = worst_cosine(load(func_out), ref) if p.returncode == 0 else float("nan")
        print(f"{'PASS' if c >= MIN_COSINE else 'FAIL'} {name}: F32 bmodel (func) vs onnxruntime cosine {c:.6f}")
        deployed.append(name)
        if not c >= MIN_COSINE:
            failures.append(f"{name}: F32 bmodel vs onnxruntime cosine {c:.6f} < {MIN_COSINE} {p.stderr.strip()}")
            continue
        sim = check_sim_equals_func(name, bmodel, x, func_out, tmp, "F32")
        failures += ([sim] if sim else []) + check_int8(name, top, x, tmp)
        x_outcome[name], problem = check_bm1684x(name, top, x, ref, tmp)
        failures += [problem] if problem else []
        if x_outcome[name] == "pass" and os.path.exists(os.path.join(tmp, f"{name}.cali")):
            x8_outcome[name], problem = check_bm1684x_int8(name, top, x, tmp)
            failures += [problem] if problem else []
print(f"F32 deploys: {', '.join(deployed) or 'none'}; refused: {', '.join(refused) or 'none'}")
for name in zoo.names_of(MODELS):
    outcome = "refused" if name in refused else "fail" if any(f.startswith(f"{name}: ") for f in failures) else "pass"
    pinned = expected[name][0]
    print(f"{name}: {outcome} (pinned: {pinned})")
    if zoo.ZOO[name][3] and name in refused:
        failures.append(f"{name}: a CI zoo model must deploy (F32 and INT8); its deploy was refused")
    if outcome != "fail" and outcome != pinned:
        failures.append(f"{name}: {outcome}, pinned {pinned} in {os.path.basename(EXPECTED)} (update it with the reason)")
    x_pinned = expected[name][2]
    if name in x_outcome and x_outcome[name] != "fail" and x_outcome[name] != x_pinned:
        failures.append(f"{name}: BM1684X F32 {x_outcome[name]}, pinned x:{x_pinned} in {os.path.basename(EXPECTED)} "
                        "(update it with the reason)")
    x8_pinned = expected[name][3]
    if name in x8_outcome and x8_outcome[name] != "fail" and x8_outcome[name] != x8_pinned:
        failures.append(f"{name}: BM1684X INT8 {x8_outcome[name]}, pinned x8:{x8_pinned} in "
                        f"{os.path.basename(EXPECTED)} (update it with the reason)")
for f in failures:
    print(f"FAIL {f}")
sys.exit(1 if failures else 0)

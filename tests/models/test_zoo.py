#!/usr/bin/python3
"""The CI zoo models (models/zoo.py --models ci) against onnxruntime, and which deploy.

    test_zoo.py <tpuc> <repo root>

Exports what is missing or stale (idempotent), then per model: `tpuc import` and the Top
interpreter must match onnxruntime's saved outputs (worst output cosine >= 0.9999).
`tpuc deploy --quantize F32` either gives a bmodel whose func-backend outputs match
onnxruntime too, or fails with exit 2 and one line (the `no lowering for ...` work queue,
printed). Exit 0 all passed, 1 a check failed, 77 skipped without node or torch."""
import os
import shutil
import subprocess
import sys
import tempfile

TPUC, ROOT = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(ROOT, "models"))
MIN_COSINE = 0.9999
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

OUT = os.path.join(ROOT, "models", "out", "zoo")
subprocess.run([sys.executable, os.path.join(ROOT, "models", "zoo.py"), "--models", "ci", "--out", OUT],
               check=True, stdout=subprocess.DEVNULL)


def load(path):
    with np.load(path) as z:
        return {k: z[k] for k in z.files}


def worst_cosine(got, ref):
    if sorted(got) != sorted(ref):
        return float("nan")
    return min(inputs.cosine(got[k], ref[k]) for k in ref)


failures, deployed, refused = [], [], []
with tempfile.TemporaryDirectory() as tmp:
    for name in zoo.names_of("ci"):
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
        p = subprocess.run([TPUC, "deploy", top, "--quantize", "F32", "-o", bmodel], capture_output=True, text=True)
        if p.returncode != 0:
            lines = p.stderr.strip().splitlines()
            print(f"     {name}: F32 deploy refused: {p.stderr.strip()}")
            refused.append(name)
            if p.returncode != 2 or len(lines) != 1:
                failures.append(f"{name}: deploy failed with exit {p.returncode} and {len(lines)} lines, "
                                "expected exit 2 and one line")
            continue
        p = subprocess.run([TPUC, "run", bmodel, "-i", x, "-o", func_out, "--backend", "func"],
                           capture_output=True, text=True)
        c = worst_cosine(load(func_out), ref) if p.returncode == 0 else float("nan")
        print(f"{'PASS' if c >= MIN_COSINE else 'FAIL'} {name}: F32 bmodel (func) vs onnxruntime cosine {c:.6f}")
        deployed.append(name)
        if not c >= MIN_COSINE:
            failures.append(f"{name}: F32 bmodel vs onnxruntime cosine {c:.6f} < {MIN_COSINE} {p.stderr.strip()}")
print(f"F32 deploys: {', '.join(deployed) or 'none'}; refused: {', '.join(refused) or 'none'}")
for f in failures:
    print(f"FAIL {f}")
sys.exit(1 if failures else 0)

#!/usr/bin/python3
"""models/quant_headroom.py: its last ablation row models `tpuc deploy --quantize INT8`
(ResNet-18 compiled here: the row and the Tpu interpreter's output agree within 0.01
cosine), also when the activation rows round only the Tpu module's int8 tensors
(--tpu-module), --spread prints the range of one-ulp variants of the activations row,
and bad input gives exit 2 with one line.

    test_quant_headroom.py <tpuc> <repo root>       exit 77 (skipped) without torch"""
import os
import subprocess
import sys
import tempfile

TPUC, ROOT = sys.argv[1], sys.argv[2]
TOOL = os.path.join(ROOT, "models", "quant_headroom.py")
OUT = os.path.join(ROOT, "models", "out")
try:
    import onnx  # noqa: F401
    import torch  # noqa: F401
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)

subprocess.run([sys.executable, os.path.join(ROOT, "models", "export_torchvision.py"), "--models", "resnet18"],
               check=True, stdout=subprocess.DEVNULL)


def run(*cmd, expect=0):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != expect:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {p.returncode}, expected {expect}:\n{p.stdout}{p.stderr}")
    return p


with tempfile.TemporaryDirectory() as tmp:
    model, x = os.path.join(OUT, "resnet18.onnx"), os.path.join(OUT, "resnet18_in.npz")
    top, cali = os.path.join(tmp, "r18.top.mlir"), os.path.join(tmp, "r18.cali")
    tpu, out = os.path.join(tmp, "r18.tpu.mlir"), os.path.join(tmp, "tpu_out.npz")
    run(TPUC, "import", model, "-o", top)
    # The tool models the per-tensor lowering: no recipe search.
    run(TPUC, "calibrate", top, "--dataset", os.path.join(OUT, "cali", "resnet18"), "--method", "max",
        "--int8-recipe", "none", "-o", cali)
    run(TPUC, "deploy", top, "--quantize", "INT8", "--calibration-table", cali,
        "-o", os.path.join(tmp, "r18.bmodel"))
    run(TPUC, "run", tpu, "-i", x, "-o", out)
    rows = {}
    for line in run(sys.executable, TOOL, model, cali, x, "--tpu", out).stdout.splitlines()[1:]:
        label, value = line.rsplit(None, 1)
        rows[label.strip()] = float(value)
    print(rows)
    expected = ["input only", "activations", "+ weights", "+ int16 bias", "tpu interpreter"]
    if list(rows) != expected:
        sys.exit(f"FAIL: rows {list(rows)}, expected {expected}")
    if not all(0.9 < v <= 1.0 for v in rows.values()):
        sys.exit(f"FAIL: a cosine outside (0.9, 1]: {rows}")
    if abs(rows["+ int16 bias"] - rows["tpu interpreter"]) > 0.01:
        sys.exit("FAIL: the ablation's last row does not model the compiled Tpu module")
    if not rows["input only"] >= rows["+ weights"]:
        sys.exit("FAIL: rounding only the input should lose less than rounding everything")
    # --tpu-module: the activation rows round the tensors the module holds in
    # int8 (a subset of the table's), the last row still models the module.
    chip = {}
    for line in run(sys.executable, TOOL, model, cali, x, "--tpu", out, "--tpu-module", tpu).stdout.splitlines()[1:]:
        label, value = line.rsplit(None, 1)
        chip[label.strip()] = float(value)
    print(chip)
    if list(chip) != expected or abs(chip["+ int16 bias"] - chip["tpu interpreter"]) > 0.01:
        sys.exit(f"FAIL: --tpu-module rows {chip}")
    if chip["activations"] < rows["activations"] - 1e-3:
        sys.exit("FAIL: rounding the module's int8 tensors lost more than rounding every calibrated tensor")
    # --spread: the activations row again with one-ulp changes before each
    # rounding; the variants land near the row (not on one value: roundings flip).
    spread = {}
    for line in run(sys.executable, TOOL, model, cali, x, "--tpu-module", tpu, "--spread", "4").stdout.splitlines()[1:]:
        label, value = line.rsplit(None, 1)
        spread[label.strip()] = float(value)
    print(spread)
    lo, hi = spread.get("activations, 4 one-ulp variants: min"), spread.get("activations, 4 one-ulp variants: max")
    if lo is None or hi is None or not lo <= hi or abs(spread["activations"] - chip["activations"]) > 0 \
            or max(abs(lo - chip["activations"]), abs(hi - chip["activations"])) > 0.01:
        sys.exit(f"FAIL: --spread rows {spread}")
    p = run(sys.executable, TOOL, model, cali, x, "--spread", "-1", expect=2)
    if "--spread must be between 0 and 100" not in p.stderr or len(p.stderr.splitlines()) != 1:
        sys.exit(f"FAIL: bad --spread message: {p.stderr!r}")
    p = run(sys.executable, TOOL, model, cali, x, "--tpu-module", cali, expect=2)
    if "no int8 tensor" not in p.stderr or len(p.stderr.splitlines()) != 1:
        sys.exit(f"FAIL: a non-module --tpu-module message: {p.stderr!r}")

    bad = os.path.join(tmp, "bad.cali")
    with open(bad, "w") as f:
        f.write("input 1.0 -1\n")
    p = run(sys.executable, TOOL, model, bad, x, expect=2)
    if "bad.cali:1: expected 'name threshold min max'" not in p.stderr or len(p.stderr.splitlines()) != 1:
        sys.exit(f"FAIL: bad table message: {p.stderr!r}")
    with open(bad, "w") as f:
        f.write("input 1.0 -1 1\n")
    p = run(sys.executable, TOOL, model, bad, x, expect=2)
    if "calibration table has no threshold for" not in p.stderr:
        sys.exit(f"FAIL: missing-tensor message: {p.stderr!r}")
    p = run(sys.executable, TOOL, model, cali, os.path.join(OUT, "ppocr_det_in.npz"), expect=2)
    if "no array named 'input'" not in p.stderr:
        sys.exit(f"FAIL: wrong-input message: {p.stderr!r}")
print("PASS")

#!/usr/bin/python3
"""Self-check of the exported models against onnxruntime (tools/ort/run.js).

    /usr/bin/python3 models/check_models.py [--out models/out] [--ensure] [--threads N]

For every model in models/out (torchvision ResNet-18/50, MobileNetV2 at batch 1
and 4, PP-OCRv4 det):
  * onnxruntime's outputs for the two seeded inputs (M_in.npz, M_in2.npz) differ
    clearly (cosine < 0.95), so a comparison on these inputs means something;
  * for the torchvision models, onnxruntime's output matches torch's (saved at
    export time) with cosine >= 0.9999.
--ensure first runs the export scripts (they skip what is up to date).
Exit 0 all passed, 1 a check failed, 2 bad usage/missing files, 77 skipped
because node or torch is absent.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import inputs  # noqa: E402

RUNNER = os.path.join(ROOT, "tools", "ort", "run.js")
ORT_PACKAGE = os.path.join(ROOT, "tools", "ort", "node_modules", "onnxruntime-node")
TORCHVISION = ["resnet18", "resnet50", "mobilenet_v2"]
MAX_INPUT_COSINE = 0.95
MIN_TORCH_COSINE = 0.9999
SKIP = 77


def skip(msg):
    print(f"check_models: SKIPPED: {msg}")
    sys.exit(SKIP)


def run_ort(model, inp, out, threads):
    r = subprocess.run(["node", RUNNER, model, inp, out, "--threads", str(threads)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"onnxruntime runner failed on {os.path.basename(model)}: {r.stderr.strip()}")
    with np.load(out) as z:
        return {k: z[k] for k in z.files}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=os.path.join(HERE, "out"))
    p.add_argument("--ensure", action="store_true", help="run the export scripts first")
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args()

    if shutil.which("node") is None:
        skip("node is not installed (scripts/install-deps.sh installs it)")
    if not os.path.isdir(ORT_PACKAGE):
        skip("tools/ort/node_modules is missing (scripts/install-deps.sh runs npm ci --ignore-scripts there)")
    try:
        import torch  # noqa: F401
        import torchvision  # noqa: F401
    except ImportError:
        skip("python3-torch/python3-torchvision are not installed (scripts/install-deps.sh installs them)")

    if args.ensure:
        for script in ("export_torchvision.py", "prepare_ppocr.py"):
            r = subprocess.run([sys.executable, os.path.join(HERE, script), "--out", args.out])
            if r.returncode != 0:
                print(f"check_models: error: {script} failed (exit {r.returncode})", file=sys.stderr)
                return 2

    cases = [(m + sfx, True) for m in TORCHVISION for sfx in ("", "_b4")] + [("ppocr_det", False)]
    missing = [name for name, _ in cases
               if not all(os.path.isfile(os.path.join(args.out, name + s)) for s in (".onnx", "_in.npz", "_in2.npz"))]
    if missing:
        print(f"check_models: error: missing exported files for {', '.join(missing)} in {args.out}; "
              "run scripts/models.sh", file=sys.stderr)
        return 2

    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, has_torch in cases:
            model = os.path.join(args.out, name + ".onnx")
            y1 = run_ort(model, os.path.join(args.out, name + "_in.npz"), os.path.join(tmp, "o1.npz"), args.threads)
            y2 = run_ort(model, os.path.join(args.out, name + "_in2.npz"), os.path.join(tmp, "o2.npz"), args.threads)
            for out_name in y1:
                c = inputs.cosine(y1[out_name], y2[out_name])
                ok = c < MAX_INPUT_COSINE
                print(f"{'PASS' if ok else 'FAIL'} {name}:{out_name} input sensitivity: cosine(out(in), out(in2)) = "
                      f"{c:.4f} (< {MAX_INPUT_COSINE})")
                passed, failed = passed + ok, failed + (not ok)
            if has_torch:
                with np.load(os.path.join(args.out, name + "_torch_out.npz")) as z:
                    ref = z["output"]
                got = y1["output"]
                ok = got.shape == ref.shape
                c = inputs.cosine(got, ref) if ok else float("nan")
                ok = ok and c >= MIN_TORCH_COSINE
                diff = float(np.abs(got - ref).max()) if got.shape == ref.shape else float("nan")
                print(f"{'PASS' if ok else 'FAIL'} {name}:output onnxruntime vs torch: cosine = {c:.6f} "
                      f"(>= {MIN_TORCH_COSINE}), max |diff| = {diff:.3g}, shape {list(got.shape)}")
                passed, failed = passed + ok, failed + (not ok)
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

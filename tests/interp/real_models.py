#!/usr/bin/python3
"""The fp32 reference path on real networks against onnxruntime.

    real_models.py path/to/tpuc repo_root [--models resnet18,...]

For torchvision ResNet-18, ResNet-50, MobileNetV2 (batch 1 and 4) and PP-OCRv4
det (models/out, exported idempotently first): `tpuc import`, `tpuc run` on the
two seeded inputs, onnxruntime (tools/ort/run.js) on the same inputs, and
`tpuc compare` with cosine >= 0.9999 (euclid >= 0.999) on the final outputs.
The two inputs give clearly different outputs (models/check_models.py), so
matching on both means the interpreter follows the input.
Exit 0 all match, 1 a mismatch or failure, 77 skipped because node, the
onnxruntime package or torch is absent.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
MODELS = ["resnet18", "resnet18_b4", "resnet50", "mobilenet_v2", "mobilenet_v2_b4", "ppocr_det"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tpuc")
    ap.add_argument("root")
    ap.add_argument("--models", default=",".join(MODELS))
    args = ap.parse_args()
    root = args.root
    runner = os.path.join(root, "tools", "ort", "run.js")
    if shutil.which("node") is None:
        print("real_models: SKIPPED: node is not installed (scripts/install-deps.sh)")
        return SKIP
    if not os.path.isdir(os.path.join(root, "tools", "ort", "node_modules", "onnxruntime-node")):
        print("real_models: SKIPPED: tools/ort/node_modules/onnxruntime-node is missing (scripts/models.sh)")
        return SKIP
    try:
        import torch  # noqa: F401
    except ImportError:
        print("real_models: SKIPPED: python3-torch is not installed (scripts/install-deps.sh)")
        return SKIP
    out = os.path.join(root, "models", "out")
    # Idempotent: a model whose stamp matches is skipped in seconds.
    subprocess.run(["/usr/bin/python3", os.path.join(root, "models", "export_torchvision.py"), "--batch", "1,4"],
                   check=True)
    subprocess.run(["/usr/bin/python3", os.path.join(root, "models", "prepare_ppocr.py")], check=True)

    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            onnx = os.path.join(out, name + ".onnx")
            mlir = os.path.join(tmp, name + ".top.mlir")
            cmd = [args.tpuc, "import", onnx, "-o", mlir]
            if name == "ppocr_det":
                cmd += ["--input-shapes", "[[1,3,640,640]]"]
            if subprocess.run(cmd).returncode != 0:
                failed.append(name + ": import failed")
                continue
            for inp in ("_in", "_in2"):
                npz = os.path.join(out, name + inp + ".npz")
                ours = os.path.join(tmp, name + inp + "_top.npz")
                ref = os.path.join(tmp, name + inp + "_ort.npz")
                if subprocess.run([args.tpuc, "run", mlir, "--input", npz, "-o", ours]).returncode != 0:
                    failed.append(f"{name}{inp}: tpuc run failed")
                    continue
                if subprocess.run(["node", runner, onnx, npz, ref]).returncode != 0:
                    failed.append(f"{name}{inp}: onnxruntime failed")
                    continue
                print(f"== {name}{inp}: onnxruntime vs Top interpreter", flush=True)
                rc = subprocess.run([args.tpuc, "compare", ref, ours, "--tolerance", "0.9999,0.999"]).returncode
                if rc != 0:
                    failed.append(f"{name}{inp}: compare exit {rc}")
    for f in failed:
        print("FAIL", f)
    print(f"real_models: {len(failed)} failure(s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""The MediaPipe TFLite models through `tpuc import` and the Top interpreter,
against a reference runtime: cosine >= 0.9999 on every output.

    test_tflite_mediapipe.py TPUC ARMNN_RUN ROOT

The reference is Arm NN 20.08 (tools/armnn, CpuRef) where it runs the model;
where it refuses one (an operator it cannot parse or computes differently,
named in its one-line error), the op-by-op NumPy reference
(tests/models/tflite_reference.py), itself checked against Arm NN on the
model both run. The Top module's Permutes are counted too: one after the NHWC
input, plus one per reshape that mixes channels with spatial dims, nothing
else. Then the chip path: `deploy --quantize F32` on the func backend matches
the same reference (cosine >= 0.9999), and INT8 (calibrated on 8 other
portraits) is bit-exact with the Tpu interpreter; both bmodels give the same
bytes on the timed simulator as on func. Exits 77 (skipped) only when the
models cannot be fetched (no npm).
"""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

TPUC, ARMNN, ROOT = sys.argv[1:4]
MODELS = os.path.join(ROOT, "models/out/mediapipe")
REFERENCE = os.path.join(ROOT, "tests/models/tflite_reference.py")
MIN_COSINE = 0.9999


def synthetic_portrait(size, lo, hi, seed=1):
    """A head-and-shoulders picture (sky, skin-coloured face with eyes, dark body), scaled to [lo, hi];
    another seed moves the person and changes the noise."""
    yy, xx = np.mgrid[0:size, 0:size] / (size - 1)
    if seed != 1:
        shift = np.random.default_rng(seed).uniform(-0.12, 0.12, 2)
        xx, yy = xx - shift[0], yy - shift[1]
    img = np.zeros((size, size, 3)) + np.array([0.3, 0.5, 0.7]) * (0.6 + 0.4 * yy[..., None])
    img[((xx - 0.5) / 0.17) ** 2 + ((yy - 0.35) / 0.22) ** 2 < 1] = [0.85, 0.65, 0.55]
    img[((xx - 0.5) / 0.42) ** 2 + ((yy - 1.05) / 0.45) ** 2 < 1] = [0.2, 0.2, 0.3]
    for cx in (0.43, 0.57):
        img[((xx - cx) / 0.025) ** 2 + ((yy - 0.32) / 0.015) ** 2 < 1] = [0.1, 0.1, 0.1]
    img = np.clip(img + np.random.default_rng(seed).normal(0, 0.02, img.shape), 0, 1)
    return (lo + (hi - lo) * img).astype(np.float32)[None]


# model, input name, input size, input range, expected Permutes in the Top module
CASES = [
    ("face_detection_short_range", "input", 128, (-1, 1), 5),
    ("face_detection_full_range", "input", 192, (-1, 1), 2),
    ("selfie_segmentation", "input_1", 256, (0, 1), 1),
    ("face_landmark", "input_1", 192, (0, 1), 1),
    ("hand_landmark_full", "input_1", 224, (0, 1), 1),
    ("pose_landmark_full", "input_1", 256, (0, 1), 2),
]


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    return r.returncode, (r.stderr or r.stdout).strip()


def cosine(a, b):
    a, b = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def compare(what, ref_path, got_path):
    ref, got = np.load(ref_path), np.load(got_path)
    ok = True
    for name in ref.files:
        if name not in got.files or ref[name].shape != got[name].shape:
            print(f"  {what}: {name}: missing or shape differs")
            ok = False
            continue
        c = cosine(ref[name], got[name])
        print(f"  {what}: {name} {ref[name].shape} cosine {c:.9f} max|diff| {np.abs(ref[name] - got[name]).max():.3g}")
        ok &= c >= MIN_COSINE
    return ok


def same_bytes(what, a_path, b_path):
    a, b = np.load(a_path), np.load(b_path)
    diff = [k for k in a.files if k not in b.files or a[k].tobytes() != b[k].tobytes()]
    print(f"  {what}: {'identical' if not diff else 'DIFFER at ' + ', '.join(diff)}")
    return not diff


def chip_path(base, reference, input_name, size, lo, hi):
    """F32 and INT8 bmodels: func against the reference / the Tpu interpreter, sim against func."""
    ok = True
    cali = base + "_cali"
    os.makedirs(cali, exist_ok=True)
    for i in range(8):
        np.savez(os.path.join(cali, f"sample_{i:02d}.npz"), **{input_name: synthetic_portrait(size, lo, hi, seed=100 + i)})
    steps = {
        "F32": [[TPUC, "deploy", base + ".top.mlir", "--quantize", "F32", "-o", base + "_f32.bmodel"]],
        "INT8": [[TPUC, "calibrate", base + ".top.mlir", "--dataset", cali, "-o", base + ".cali"],
                 [TPUC, "deploy", base + ".top.mlir", "--quantize", "INT8", "--calibration-table", base + ".cali",
                  "--calibration-data", cali, "-o", base + "_int8.bmodel"],
                 [TPUC, "run", base + "_int8.tpu.mlir", "-i", base + "_in.npz", "-o", base + "_int8_tpu.npz"]],
    }
    for mode, cmds in steps.items():
        tag = base + "_" + mode.lower()
        for backend in ("func", "sim"):
            cmds.append([TPUC, "run", tag + ".bmodel", "-i", base + "_in.npz", "-o", f"{tag}_{backend}.npz",
                         "--backend", backend])
        for cmd in cmds:
            rc, err = run(cmd)
            if rc != 0:
                print(f"  FAIL: {mode}: {' '.join(cmd[1:2])}: {err}")
                return False
        if mode == "F32":
            ok &= compare("F32 bmodel (func) vs reference", reference, tag + "_func.npz")
        else:
            ok &= same_bytes("INT8 bmodel (func) vs Tpu interpreter", tag + "_tpu.npz", tag + "_func.npz")
            with np.load(reference) as r, np.load(tag + "_func.npz") as g:
                print("  INT8 bmodel vs reference (accuracy, not checked here): " +
                      ", ".join(f"{k} cosine {cosine(r[k], g[k]):.4f}" for k in r.files))
        ok &= same_bytes(f"{mode} bmodel sim vs func", tag + "_func.npz", tag + "_sim.npz")
    return ok


def main():
    if not all(os.path.isfile(os.path.join(MODELS, c[0] + ".tflite")) for c in CASES):
        if not shutil.which("npm"):
            print("skipped: npm is missing, the MediaPipe models cannot be fetched")
            return 77
        rc, err = run(["bash", os.path.join(ROOT, "scripts/models-tflite.sh")])
        if rc != 0:
            print(f"FAIL: scripts/models-tflite.sh: {err}")
            return 1
    ok = True
    cross_checked = False
    with tempfile.TemporaryDirectory() as tmp:
        for model, input_name, size, (lo, hi), permutes in CASES:
            path = os.path.join(MODELS, model + ".tflite")
            base = os.path.join(tmp, model)
            np.savez(base + "_in.npz", **{input_name: synthetic_portrait(size, lo, hi)})
            print(model)
            for cmd in ([TPUC, "import", path, "-o", base + ".top.mlir"],
                        [TPUC, "run", base + ".top.mlir", "-i", base + "_in.npz", "-o", base + "_top.npz"]):
                rc, err = run(cmd)
                if rc != 0:
                    print(f"  FAIL: {' '.join(cmd[:2])}: {err}")
                    return 1
            with open(base + ".top.mlir") as f:
                found = f.read().count('"top.permute"')
            print(f"  Top module: {found} permute(s), expected {permutes}")
            ok &= found == permutes
            rc_np, err_np = run(["/usr/bin/python3", REFERENCE, path, base + "_in.npz", base + "_np.npz"])
            if rc_np != 0:
                print(f"  FAIL: NumPy reference: {err_np}")
                return 1
            rc, err = run([ARMNN, path, base + "_in.npz", base + "_armnn.npz"])
            if rc == 0:
                ok &= compare("Arm NN vs Top", base + "_armnn.npz", base + "_top.npz")
                ok &= compare("Arm NN vs NumPy reference", base + "_armnn.npz", base + "_np.npz")
                cross_checked = True
                reference = base + "_armnn.npz"
            else:
                print(f"  Arm NN refuses the model: {err}")
                ok &= compare("NumPy reference vs Top", base + "_np.npz", base + "_top.npz")
                reference = base + "_np.npz"
            ok &= chip_path(base, reference, input_name, size, lo, hi)
    if not cross_checked:
        print("FAIL: the NumPy reference was not checked against Arm NN on any model")
        ok = False
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

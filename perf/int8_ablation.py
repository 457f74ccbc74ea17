#!/usr/bin/python3
"""INT8 calibration ablation on the trained PP-OCRv4 detector, written into docs/quantization.md.

    /usr/bin/python3 perf/int8_ablation.py --tpuc build/tools/tpuc/tpuc [--work DIR] [--cali 32] [--test 8]
        [--tune-samples 4] [--no-docs]

Renders text pages (models/render_text_pages.py: calibration pages and
disjoint test pages), imports models/out/ppocr_det.onnx with PaddleOCR's
preprocessing as tpuc import flags, and for every calibration setting
(each threshold method, the default, KL + --tune 5, --search-threshold):
tpuc calibrate on the calibration pages, tpuc deploy INT8, then the Tpu
interpreter (bit-exact with the bmodel) on every test page through
`tpuc run --image`. Each setting is scored against the Top interpreter's
fp32 output on the same pages: the probability map's cosine and the IoU of
the binary maps at the DB threshold 0.3 (mean and minimum over the pages).
The table replaces the block between the int8-ablation markers of
docs/quantization.md. Exit 2 with one line on bad input.
"""
import argparse
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = os.path.join(ROOT, "models", "out", "ppocr_det.onnx")
DOC = os.path.join(ROOT, "docs", "quantization.md")
BEGIN, END = "<!-- int8-ablation:begin -->", "<!-- int8-ablation:end -->"
# PaddleOCR's det preprocessing: (x / 255 - ImageNet mean) / ImageNet std, RGB.
MEAN = "123.675,116.28,103.53"
SCALE = ",".join(repr(1 / (255 * s)) for s in (0.229, 0.224, 0.225))
DB_THRESHOLD = 0.3
REUSE = False
METHODS = ["max", "kl", "mse", "percentile9999", "aciq-gauss", "aciq-laplace"]


def fail(msg):
    print(f"int8_ablation: error: {msg}", file=sys.stderr)
    sys.exit(2)


def run(cmd, log, product=None):
    """Runs cmd; with --reuse, not when `product` already exists."""
    if REUSE and product and os.path.exists(product):
        return
    with open(log, "a") as f:
        f.write("$ " + " ".join(cmd) + "\n")
        f.flush()
        r = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        fail(f"{' '.join(cmd[:2])} failed (exit {r.returncode}), see {log}")


def prob_map(npz):
    d = np.load(npz)
    if len(d.files) != 1:
        fail(f"{npz}: expected one output, got {d.files}")
    return d[d.files[0]].astype(np.float64).ravel()


def cosine(a, b):
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-30))


def iou(a, b):
    ma, mb = a > DB_THRESHOLD, b > DB_THRESHOLD
    union = np.logical_or(ma, mb).sum()
    return float(np.logical_and(ma, mb).sum() / union) if union else 1.0


def threshold_of(cali, tensor):
    for line in open(cali):
        f = line.split("#", 1)[0].split()
        if len(f) == 4 and f[0] == tensor:
            return float(f[1])
    return float("nan")


def table_comments(cali):
    return [line[2:].strip() for line in open(cali) if line.startswith("# ") and "name threshold" not in line
            and "tpuc calibration table" not in line]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tpuc", required=True)
    p.add_argument("--work", default=os.path.join(ROOT, "build", "int8_ablation"))
    p.add_argument("--cali", type=int, default=32)
    p.add_argument("--test", type=int, default=8)
    p.add_argument("--tune-samples", type=int, default=4)
    p.add_argument("--no-docs", action="store_true", help="print the table only")
    p.add_argument("--methods-only", action="store_true", help="only the six methods (no default/tune/search rows)")
    p.add_argument("--reuse", action="store_true",
                   help="keep the pages, tables, bmodels and outputs already in --work (after an interrupted run)")
    a = p.parse_args()
    global REUSE
    REUSE = a.reuse
    if not os.access(a.tpuc, os.X_OK):
        fail(f"{a.tpuc}: not an executable")
    if not os.path.exists(MODEL):
        fail(f"{MODEL} not found: run scripts/models.sh")
    if a.cali < 1 or a.test < 1:
        fail("--cali and --test must be >= 1")
    os.makedirs(a.work, exist_ok=True)
    log = os.path.join(a.work, "log.txt")
    open(log, "a" if a.reuse else "w").close()
    pages = os.path.join(a.work, "pages")
    run(["/usr/bin/python3", os.path.join(ROOT, "models", "render_text_pages.py"), pages,
         "--cali", str(a.cali), "--test", str(a.test)], log, os.path.join(pages, "test"))
    tests = sorted(os.path.join(pages, "test", f) for f in os.listdir(os.path.join(pages, "test")))
    top = os.path.join(a.work, "det.top.mlir")
    run([a.tpuc, "import", MODEL, "--input-shapes", "[[1,3,640,640]]", "--mean", MEAN, "--scale", SCALE,
         "-o", top], log, top)
    ref = []
    for i, img in enumerate(tests):
        out = os.path.join(a.work, f"fp32_{i}.npz")
        run([a.tpuc, "run", top, "--image", img, "-o", out], log, out)
        ref.append(prob_map(out))

    # Calibration tables: the six methods from one statistics pass, then the
    # default (no flag), KL + tune and search-threshold.
    cali_dir = os.path.join(a.work, "cali")
    os.makedirs(cali_dir, exist_ok=True)
    t0 = time.time()
    run([a.tpuc, "calibrate", top, "--dataset", os.path.join(pages, "cali"), "--calibration-method",
         ",".join(METHODS), "--no-max-fallback", "--tune-samples", str(a.tune_samples), "-o",
         os.path.join(cali_dir, "%m.cali")], log, os.path.join(cali_dir, METHODS[-1] + ".cali"))
    times = {"methods": time.time() - t0}
    settings = [(m, os.path.join(cali_dir, m + ".cali"), f"`{m}` (--no-max-fallback)") for m in METHODS]
    for name, flags in () if a.methods_only else (("default", []), ("kl-tune5", ["--calibration-method", "kl", "--tune", "5", "--no-max-fallback"]),
                        ("search-threshold", ["--search-threshold"])):
        t0 = time.time()
        path = os.path.join(cali_dir, name + ".cali")
        run([a.tpuc, "calibrate", top, "--dataset", os.path.join(pages, "cali"), *flags,
             "--tune-samples", str(a.tune_samples), "-o", path], log, path)
        times[name] = time.time() - t0
        settings.append((name, path, "default (no flag)" if not flags else "`" + " ".join(flags) + "`"))

    rows = []
    for name, cali, label in settings:
        bmodel = os.path.join(a.work, f"det_{name}.bmodel")
        tpu = bmodel[:-len(".bmodel")] + ".tpu.mlir"
        run([a.tpuc, "deploy", top, "--quantize", "INT8", "--calibration-table", cali, "-o", bmodel], log, bmodel)
        cos, ious = [], []
        for i, img in enumerate(tests):
            out = os.path.join(a.work, f"{name}_{i}.npz")
            run([a.tpuc, "run", tpu, "--image", img, "-o", out], log, out)
            got = prob_map(out)
            cos.append(cosine(ref[i], got))
            ious.append(iou(ref[i], got))
        rows.append((label, np.mean(cos), np.min(cos), np.mean(ious), np.min(ious),
                     threshold_of(cali, "sigmoid_0.tmp_0"), table_comments(cali)))
        print(f"int8_ablation: {name}: cosine {np.mean(cos):.4f} (min {np.min(cos):.4f}), "
              f"IoU@0.3 {np.mean(ious):.3f} (min {np.min(ious):.3f})", flush=True)

    lines = [BEGIN,
             f"PP-OCRv4 det, INT8 (Tpu interpreter = bmodel) against the Top interpreter's fp32, on {len(tests)} "
             f"rendered test pages after calibration on {a.cali} other pages "
             f"(`/usr/bin/python3 perf/int8_ablation.py --tpuc build/tools/tpuc/tpuc --cali {a.cali} --test {a.test} "
             f"--tune-samples {a.tune_samples}`):",
             "",
             "| calibration | cosine mean | cosine min | IoU@0.3 mean | IoU@0.3 min | sigmoid output threshold |",
             "|---|---|---|---|---|---|"]
    for label, cm, cn, im, imin, thr, _ in rows:
        lines.append(f"| {label} | {cm:.4f} | {cn:.4f} | {im:.3f} | {imin:.3f} | {thr:.4g} |")
    lines.append("")
    measured = [f"{k} {v:.0f} s" for k, v in times.items() if v > 1]
    if measured:
        lines.append("Calibration wall time (32 pages, the loaded 2-core machine; `methods`: all six from one "
                     "statistics pass): " + ", ".join(measured) + ".")
    lines.append("What the calibrator wrote in the tables' comments:")
    lines.append("")
    for label, *_, comments in rows:
        for c in comments:
            if c.startswith(("tune", "search", "fake-quantized", "INT8 Tpu", "method: max (")):
                lines.append(f"- {label}: {c}")
    lines.append(END)
    block = "\n".join(lines)
    print(block)
    if a.no_docs:
        return
    doc = open(DOC).read()
    if BEGIN not in doc or END not in doc:
        fail(f"{DOC}: the markers {BEGIN} / {END} are missing")
    doc = doc[:doc.index(BEGIN)] + block + doc[doc.index(END) + len(END):]
    with open(DOC, "w") as f:
        f.write(doc)


if __name__ == "__main__":
    main()

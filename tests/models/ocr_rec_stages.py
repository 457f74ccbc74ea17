#!/usr/bin/python3
"""The PP-OCRv4 recogniser at two text-line widths from one bmodel (issue 33: multi-stage bmodels).

    /usr/bin/python3 tests/models/ocr_rec_stages.py --tpuc PATH --work DIR [--widths 320,640] [--test 6]

Imports the trained recogniser (perf/ocr_rec_eval.py) at 1x3x48xW for each width, deploys each F32, joins the
bmodels with `tpuc combine`, and reads rendered test lines of each width (models/render_text_lines.py) through
the combined bmodel and through that width's own bmodel on the func backend: every output must be the same
bytes, and the lines read are printed per width. A width no stage has must be refused with the one-line
error. Exit 1 on a difference or a missing refusal, 2 on bad input.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "perf"))
import ocr_rec_eval as rec  # noqa: E402  (the recogniser's paths, decoding and scoring)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tpuc", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--widths", default="320,640")
    ap.add_argument("--test", type=int, default=6)
    a = ap.parse_args()
    widths = [int(w) for w in a.widths.split(",")]
    if len(widths) < 2 or len(set(widths)) != len(widths):
        rec.fail("--widths takes two or more different widths")
    if not os.path.exists(rec.MODEL):
        rec.fail(f"{rec.MODEL} not found (scripts/install-deps.sh installs tools/ort)")
    os.makedirs(a.work, exist_ok=True)
    log = os.path.join(a.work, "log.txt")
    open(log, "w").close()
    with open(rec.KEYS, encoding="utf-8") as f:
        keys = [line.rstrip("\n") for line in f]
    single, lines = {}, {}
    for w in widths:
        lines_dir = os.path.join(a.work, f"lines_{w}")
        rec.run(["/usr/bin/python3", os.path.join(rec.ROOT, "models", "render_text_lines.py"), lines_dir, "--cali",
                 "1", "--test", str(a.test), "--width", str(w)], log)
        with open(os.path.join(lines_dir, "labels.json")) as f:
            labels = json.load(f)
        tests = sorted(k for k in labels if k.startswith("test/"))
        lines[w] = ([os.path.join(lines_dir, k) for k in tests], [labels[k] for k in tests])
        top = os.path.join(a.work, f"rec_{w}.top.mlir")
        rec.run([a.tpuc, "import", rec.MODEL, "--input-shapes", f"[[1,3,48,{w}]]", "-o", top], log)
        # One net name for every width (deploy names the net by the file): the stages of one net.
        os.makedirs(os.path.join(a.work, str(w)), exist_ok=True)
        single[w] = os.path.join(a.work, str(w), "rec.bmodel")
        rec.run([a.tpuc, "deploy", top, "--quantize", "F32", "-o", single[w]], log)
    combined = os.path.join(a.work, "rec_stages.bmodel")
    rec.run([a.tpuc, "combine", *[single[w] for w in widths], "-o", combined], log)
    sizes = {w: os.path.getsize(single[w]) for w in widths}
    print(f"ocr_rec_stages: {len(widths)} stages in {os.path.getsize(combined)} bytes "
          f"(the single-stage bmodels: {' + '.join(str(sizes[w]) for w in widths)})")
    failed = False
    for w in widths:
        tests, labels = lines[w]
        texts = {}
        for tag, bmodel in (("single", single[w]), ("stages", combined)):
            texts[tag] = rec.read_lines(a.tpuc, bmodel, tests, a.work, f"{tag}_{w}", keys, log)
        differ = []
        for i in range(len(tests)):
            with np.load(os.path.join(a.work, f"single_{w}_{i:03d}.npz")) as x, \
                 np.load(os.path.join(a.work, f"stages_{w}_{i:03d}.npz")) as y:
                if sorted(x.files) != sorted(y.files) or any(x[k].tobytes() != y[k].tobytes() for k in x.files):
                    differ.append(i)
        exact, chars = rec.score(texts["stages"], labels)
        print(f"ocr_rec_stages: width {w}: {exact} of {len(labels)} lines exact, character accuracy {chars:.4f}; "
              + (f"outputs of lines {differ} differ from the single-stage bmodel's" if differ
                 else "every output equals the single-stage bmodel's"))
        failed = failed or bool(differ)
    # A width between the stages is refused, naming them.
    odd = (widths[0] + widths[1]) // 2 // 8 * 8
    probe = os.path.join(a.work, "probe.npz")
    np.savez(probe, x=np.zeros((1, 3, 48, odd), np.float32))
    p = subprocess.run([a.tpuc, "run", combined, "-i", probe, "-o", os.path.join(a.work, "probe_out.npz"),
                        "--backend", "func"], capture_output=True, text=True)
    want = f"has no stage for input 'x' [1,3,48,{odd}]"
    if p.returncode != 2 or want not in p.stderr or len(p.stderr.strip().splitlines()) != 1:
        print(f"ocr_rec_stages: width {odd} was not refused with one line (exit {p.returncode}): {p.stderr.strip()}",
              file=sys.stderr)
        failed = True
    else:
        print(f"ocr_rec_stages: width {odd}: {p.stderr.strip()}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Rendered text lines for judging the PP-OCRv4 recogniser (CTC) on real-looking input.

    /usr/bin/python3 models/render_text_lines.py OUT_DIR [--cali N] [--test N] [--width 320]

Writes OUT_DIR/cali/line_XXX.npz and OUT_DIR/test/line_XXX.npz (the model input "x", 1x3x48xW float32,
PaddleOCR's recogniser preprocessing: BGR, x / 255 - 0.5) / 0.5, the line resized to height 48 keeping its
aspect ratio and padded with zeros on the right up to W), the same lines as PNGs (png/, for viewing), and
OUT_DIR/labels.json ({"cali/line_000.npz": "text", ...}). Each line is 1-4 words of DejaVu text (Debian
fonts-dejavu-core) in one of six fonts, dark ink on a light tinted background with a little noise, from its own
seed (calibration lines 0..N-1, test lines 10000..): the two sets never share a line and reruns give the same
pixels. Exit 2 with one line on bad input.
"""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from render_text_pages import FONT_DIR, FONTS, WORDS  # noqa: E402  (the pages' fonts and words)

HEIGHT = 48


def fail(msg):
    print(f"render_text_lines: error: {msg}", file=sys.stderr)
    sys.exit(2)


def render_line(seed, width):
    """(the model input 1x3x48xW, the RGB image, the text) of line `seed`."""
    from PIL import Image, ImageDraw, ImageFont
    rng = np.random.default_rng(seed)
    text = " ".join(rng.choice(WORDS, int(rng.integers(1, 5))))
    font = ImageFont.truetype(os.path.join(FONT_DIR, FONTS[int(rng.integers(len(FONTS)))]), 40)
    box = font.getbbox(text)
    pad = int(rng.integers(4, 12))
    w, h = box[2] - box[0] + 2 * pad, box[3] - box[1] + 2 * pad
    bg = tuple(int(v) for v in rng.integers(200, 256, 3))
    ink = tuple(int(v) for v in rng.integers(0, 80, 3))
    img = Image.new("RGB", (w, h), bg)
    ImageDraw.Draw(img).text((pad - box[0], pad - box[1]), text, font=font, fill=ink)
    arr = np.asarray(img, np.int16) + rng.integers(-6, 7, (h, w, 3))
    img = Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8), "RGB")
    # PaddleOCR: height 48, width by the aspect ratio (at most W), zeros to the right.
    rw = min(width, max(1, int(round(w * HEIGHT / h))))
    img = img.resize((rw, HEIGHT), Image.BILINEAR)
    bgr = np.asarray(img, np.float32)[:, :, ::-1]
    x = np.zeros((1, 3, HEIGHT, width), np.float32)
    x[0, :, :, :rw] = ((bgr / 255.0 - 0.5) / 0.5).transpose(2, 0, 1)
    return x, img, text


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--cali", type=int, default=32)
    ap.add_argument("--test", type=int, default=32)
    ap.add_argument("--width", type=int, default=320)
    a = ap.parse_args()
    if a.cali < 0 or a.test < 0 or a.cali + a.test == 0:
        fail("--cali and --test must be >= 0, not both 0")
    if a.width < 48:
        fail("--width must be >= 48")
    if not os.path.isdir(FONT_DIR):
        fail(f"{FONT_DIR}: no DejaVu fonts (apt install fonts-dejavu-core)")
    labels = {}
    os.makedirs(os.path.join(a.out, "png"), exist_ok=True)
    for sub, count, base in (("cali", a.cali, 0), ("test", a.test, 10000)):
        os.makedirs(os.path.join(a.out, sub), exist_ok=True)
        for i in range(count):
            x, img, text = render_line(base + i, a.width)
            name = f"{sub}/line_{i:03d}"
            np.savez(os.path.join(a.out, name + ".npz"), x=x)
            img.save(os.path.join(a.out, "png", f"{sub}_line_{i:03d}.png"))
            labels[name + ".npz"] = text
    with open(os.path.join(a.out, "labels.json"), "w") as f:
        json.dump(labels, f, indent=1)


if __name__ == "__main__":
    main()

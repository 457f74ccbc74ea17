#!/usr/bin/python3
"""Rendered text pages for judging the INT8 PP-OCRv4 detector on real-looking input.

    /usr/bin/python3 models/render_text_pages.py OUT_DIR [--cali N] [--test N] [--size 640]

Writes OUT_DIR/cali/page_XXX.png (calibration) and OUT_DIR/test/page_XXX.png
(evaluation): size x size RGB pages of DejaVu text (Debian fonts-dejavu-core),
dark ink on light, slightly tinted backgrounds, lines of words in several
fonts and sizes (12-48 px), some rotated by a few degrees. Every page comes
from its own seed (calibration pages 0..N-1, test pages 10000..), so the
two sets never share a page; reruns give the same pixels. Exit 2 with one
line on bad input.
"""
import argparse
import os
import sys

import numpy as np

FONT_DIR = "/usr/share/fonts/truetype/dejavu"
FONTS = ["DejaVuSans.ttf", "DejaVuSans-Bold.ttf", "DejaVuSerif.ttf", "DejaVuSansMono.ttf",
         "DejaVuSansCondensed.ttf", "DejaVuSerif-Bold.ttf"]
WORDS = ("the quick brown fox jumps over lazy dog invoice total amount date name address phone "
         "order number 2024 price qty item description shipping tax receipt customer account "
         "BM1684 TPU model layer int8 float calibration threshold page text detection line "
         "Sophgo station street city road 42 17.50 99 0.3 hello world report table summary").split()


def fail(msg):
    print(f"render_text_pages: error: {msg}", file=sys.stderr)
    sys.exit(2)


def render_page(seed, size):
    from PIL import Image, ImageDraw, ImageFont
    rng = np.random.default_rng(seed)
    bg = tuple(int(v) for v in rng.integers(200, 256, 3))
    page = Image.new("RGB", (size, size), bg)
    y = int(rng.integers(8, 40))
    while y < size - 20:
        font_size = int(rng.choice([12, 14, 16, 20, 24, 28, 32, 40, 48]))
        font = ImageFont.truetype(os.path.join(FONT_DIR, FONTS[int(rng.integers(len(FONTS)))]), font_size)
        ink = tuple(int(v) for v in rng.integers(0, 90, 3))
        text = " ".join(rng.choice(WORDS, int(rng.integers(2, 9))))
        x = int(rng.integers(5, size // 3))
        angle = float(rng.uniform(-4, 4)) if rng.random() < 0.3 else 0.0
        box = font.getbbox(text)
        w, h = box[2] + 4, box[3] + 4
        line = Image.new("L", (w, h), 0)
        ImageDraw.Draw(line).text((2, 2), text, font=font, fill=255)
        if angle:
            line = line.rotate(angle, resample=Image.BICUBIC, expand=True)
        page.paste(Image.new("RGB", line.size, ink), (x, y), line)
        y += int(h * rng.uniform(1.2, 2.5))
    # A little sensor noise.
    arr = np.asarray(page, np.int16) + rng.integers(-6, 7, (size, size, 3))
    return Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8), "RGB")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--cali", type=int, default=32)
    p.add_argument("--test", type=int, default=8)
    p.add_argument("--size", type=int, default=640)
    a = p.parse_args()
    if a.cali < 0 or a.test < 0 or not 64 <= a.size <= 4096:
        fail("--cali and --test must be >= 0 and --size in [64, 4096]")
    for f in FONTS:
        if not os.path.exists(os.path.join(FONT_DIR, f)):
            fail(f"{FONT_DIR}/{f} not found (apt-get install fonts-dejavu-core)")
    for sub, count, base in (("cali", a.cali, 0), ("test", a.test, 10000)):
        d = os.path.join(a.out, sub)
        os.makedirs(d, exist_ok=True)
        for i in range(count):
            render_page(base + i, a.size).save(os.path.join(d, f"page_{i:03d}.png"))
    print(f"render_text_pages: {a.cali} calibration and {a.test} test pages in {a.out}")


if __name__ == "__main__":
    main()

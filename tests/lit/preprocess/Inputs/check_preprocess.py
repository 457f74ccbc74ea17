# The NumPy reference of compiler/Preprocess (decoded by Pillow): compares the
# input tensor `tpuc run --image --dump-all` used with it, bit for bit.
#   check_preprocess.py dump.npz image (exact|close) [--mean m] [--scale s]
#       [--pixel-format f] [--channel-format f] [--resize-dims h,w]
#       [--keep-aspect-ratio] --shape n,c,h,w
import argparse
import math
import sys

import numpy as np
from PIL import Image

p = argparse.ArgumentParser()
p.add_argument("dump")
p.add_argument("image")
p.add_argument("mode", choices=["exact", "close"])
p.add_argument("--mean", default="0")
p.add_argument("--scale", default="1")
p.add_argument("--pixel-format", default="rgb")
p.add_argument("--channel-format", default="nchw")
p.add_argument("--resize-dims", default="")
p.add_argument("--keep-aspect-ratio", action="store_true")
p.add_argument("--shape", required=True)
a = p.parse_args()

shape = [int(v) for v in a.shape.split(",")]
nchw = a.channel_format == "nchw"
n, c, h, w = (shape if nchw else [shape[0], shape[3], shape[1], shape[2]])

img = Image.open(a.image)
if a.pixel_format == "gray":
    px = np.asarray(img.convert("L"), np.float64)[:, :, None]  # Pillow's L: the same integer formula
else:
    px = np.asarray(img.convert("RGB"), np.float64)
    if a.pixel_format == "bgr":
        px = px[:, :, ::-1]
h0, w0 = px.shape[:2]


def taps(n_in, n_out):
    ratio = n_in / n_out
    s = (np.arange(n_out, dtype=np.float64) + 0.5) * ratio - 0.5
    s = np.maximum(s, 0)
    lo = np.minimum(np.floor(s).astype(np.int64), n_in - 1)
    hi = np.minimum(lo + 1, n_in - 1)
    return lo, hi, s - lo


def resize(src, oh, ow):
    ylo, yhi, fy = taps(src.shape[0], oh)
    xlo, xhi, fx = taps(src.shape[1], ow)
    fx = fx[None, :, None]
    fy = fy[:, None, None]
    top = src[ylo][:, xlo] * (1 - fx) + src[ylo][:, xhi] * fx
    bot = src[yhi][:, xlo] * (1 - fx) + src[yhi][:, xhi] * fx
    return top * (1 - fy) + bot * fy


rh, rw = (int(v) for v in a.resize_dims.split(",")) if a.resize_dims else (h, w)
if a.keep_aspect_ratio:
    r = min(rh / h0, rw / w0)
    nh = min(max(int(math.floor(h0 * r + 0.5)), 1), rh)
    nw = min(max(int(math.floor(w0 * r + 0.5)), 1), rw)
    canvas = np.zeros((rh, rw, c), np.float64)
    top, left = (rh - nh) // 2, (rw - nw) // 2
    canvas[top:top + nh, left:left + nw] = resize(px, nh, nw)
else:
    canvas = resize(px, rh, rw)
top, left = (rh - h) // 2, (rw - w) // 2
crop = canvas[top:top + h, left:left + w]
mean = np.array([float(v) for v in a.mean.split(",")], np.float64)
scale = np.array([float(v) for v in a.scale.split(",")], np.float64)
ref = ((crop - mean) * scale).astype(np.float32)  # HWC
ref = ref.transpose(2, 0, 1) if nchw else ref
ref = np.broadcast_to(ref[None], [n] + list(ref.shape))

got = np.load(a.dump)["input"]
if got.shape != ref.shape or got.dtype != np.float32:
    sys.exit(f"check_preprocess: shape {got.shape} {got.dtype}, reference {ref.shape} float32")
if a.mode == "exact":
    if not np.array_equal(got.view(np.uint32), ref.view(np.uint32)):
        bad = np.argwhere(got != ref)
        sys.exit(f"check_preprocess: {len(bad)} of {ref.size} values differ, first at {bad[0].tolist()}: "
                 f"{got[tuple(bad[0])]!r} vs {ref[tuple(bad[0])]!r}")
    print(f"check_preprocess: {a.image}: {ref.size} values bit-equal")
else:
    # JPEG: stb_image and libjpeg-turbo (Pillow) decode with different IDCTs.
    diff = np.abs(got.astype(np.float64) - ref) / np.maximum(scale.max(), 1e-30)
    if diff.mean() > 1.0 or diff.max() > 24:
        sys.exit(f"check_preprocess: mean |diff| {diff.mean():.3f} (max {diff.max():.1f}) pixel levels")
    print(f"check_preprocess: {a.image}: within {diff.mean():.2f} pixel levels on average")

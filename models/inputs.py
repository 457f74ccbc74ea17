"""Seeded synthetic inputs shared by the export scripts.

Pure white noise is a poor stand-in for images: every sample has the same
statistics, so networks (and a calibrator) see nearly the same activations.
These generators make structured images instead, deterministically from a seed
(numpy's PCG64 stream is stable across numpy versions).
"""
import hashlib
import os
import zipfile

import numpy as np

IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], np.float32).reshape(3, 1, 1)
IMAGENET_STD = np.array([0.229, 0.224, 0.225], np.float32).reshape(3, 1, 1)


def _upsample(grid, h, w):
    """Bilinear resize of a (c, gh, gw) grid to (c, h, w), align_corners style."""
    c, gh, gw = grid.shape
    ys = np.linspace(0, gh - 1, h, dtype=np.float64)
    xs = np.linspace(0, gw - 1, w, dtype=np.float64)
    y0 = np.floor(ys).astype(int).clip(0, gh - 1)
    x0 = np.floor(xs).astype(int).clip(0, gw - 1)
    y1 = (y0 + 1).clip(0, gh - 1)
    x1 = (x0 + 1).clip(0, gw - 1)
    fy = (ys - y0)[None, :, None]
    fx = (xs - x0)[None, None, :]
    top = grid[:, y0][:, :, x0] * (1 - fx) + grid[:, y0][:, :, x1] * fx
    bot = grid[:, y1][:, :, x0] * (1 - fx) + grid[:, y1][:, :, x1] * fx
    return top * (1 - fy) + bot * fy


def smooth_image(rng, h, w):
    """One RGB image in [0, 1]: a few octaves of smooth noise, some hard-edged
    rectangles and a little pixel noise, so samples differ in colour, layout,
    exposure and texture."""
    img = np.zeros((3, h, w), np.float64)
    amp = 1.0
    for cells in (3, 6, 12, 24):
        img += amp * _upsample(rng.standard_normal((3, cells + 1, cells + 1)), h, w)
        amp *= rng.uniform(0.35, 0.65)
    # A few hard-edged rectangles give the images object-like edges.
    for _ in range(rng.integers(2, 6)):
        y, x = rng.integers(0, h), rng.integers(0, w)
        dy, dx = rng.integers(h // 10, h // 2), rng.integers(w // 10, w // 2)
        img[:, y:y + dy, x:x + dx] += rng.standard_normal((3, 1, 1)) * 1.5
    img += 0.05 * rng.standard_normal((3, h, w))
    img = (img - img.min()) / (img.max() - img.min())
    # Per-image exposure, contrast and colour cast: global statistics differ too.
    gamma = np.exp(rng.uniform(-0.8, 0.8))
    lo, hi = rng.uniform(0.0, 0.4), rng.uniform(0.6, 1.0)
    gain = rng.uniform(0.6, 1.4, size=(3, 1, 1))
    return np.clip((lo + (hi - lo) * img ** gamma) * gain, 0, 1).astype(np.float32)


def imagenet_batch(rng, n, h=224, w=224):
    """n smooth images, normalized like torchvision's ImageNet preprocessing."""
    return np.stack([(smooth_image(rng, h, w) - IMAGENET_MEAN) / IMAGENET_STD for _ in range(n)]).astype(np.float32)


def text_image(rng, h, w):
    """A document-like RGB image in [0, 1]: a light, slightly shaded page with dark
    lines of 'words' made of glyph-like strokes, for a text-detection model."""
    page = 0.85 + 0.1 * _upsample(rng.standard_normal((1, 5, 5)), h, w)
    page = np.repeat(page, 3, axis=0) + 0.05 * rng.standard_normal((3, 1, 1))
    ink = rng.uniform(0.0, 0.3, size=(3, 1, 1))
    y = int(rng.integers(10, 40))
    while y < h - 20:
        size = int(rng.integers(12, 36))  # glyph height of this line
        x = int(rng.integers(5, w // 4))
        end = int(rng.integers(w // 2, w - 5))
        while x < end:
            word = int(rng.integers(2, 9))
            for _ in range(word):
                gw = int(size * rng.uniform(0.5, 0.9))
                glyph = np.zeros((size, gw), bool)
                stroke = max(2, size // 8)
                for _ in range(rng.integers(2, 5)):
                    if rng.random() < 0.5:  # vertical stroke
                        cx = int(rng.integers(0, max(1, gw - stroke)))
                        glyph[:, cx:cx + stroke] = True
                    else:  # horizontal stroke
                        cy = int(rng.integers(0, max(1, size - stroke)))
                        glyph[cy:cy + stroke, :] = True
                yy, xx = slice(y, min(h, y + size)), slice(x, min(w, x + gw))
                g = glyph[:yy.stop - yy.start, :xx.stop - xx.start]
                page[:, yy, xx] = np.where(g[None], ink, page[:, yy, xx])
                x += gw + stroke
                if x >= end:
                    break
            x += size  # word gap
        y += int(size * rng.uniform(1.5, 3.0))
    page += 0.02 * rng.standard_normal((3, h, w))
    return page.clip(0, 1).astype(np.float32)


def ppocr_batch(rng, n, h=640, w=640):
    """n document images normalized like PaddleOCR's det preprocessing (ImageNet mean/std)."""
    return np.stack([(text_image(rng, h, w) - IMAGENET_MEAN) / IMAGENET_STD for _ in range(n)]).astype(np.float32)


def save_npz(path, arrays):
    """np.savez, but with fixed zip timestamps so reruns give byte-identical files."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = path + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED) as zf:
        for name, arr in arrays.items():
            info = zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            with zf.open(info, "w") as f:
                np.lib.format.write_array(f, np.ascontiguousarray(arr), allow_pickle=False)
    os.replace(tmp, path)


def cosine(a, b):
    a = np.asarray(a, np.float64).ravel()
    b = np.asarray(b, np.float64).ravel()
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-30))


def file_sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def read_stamp(path):
    """The text of an export stamp file, or None when there is none yet."""
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        return None

"""Writes the .npz files the tpuc sim tests feed to conv_add (x [1,8,10,10], y [1,16,8,8]).

usage: make_npz.py KIND OUT_NPZ
  good        float32 x and y (seeded)
  wrong-name  x and 'why' instead of y
  wrong-shape x of 1x8x10x9
  wrong-dtype x as float64
  missing     x only
"""
import sys

import numpy as np

kind, out = sys.argv[1:3]
rng = np.random.default_rng(7)
x = rng.uniform(-1, 1, (1, 8, 10, 10)).astype(np.float32)
y = rng.uniform(-1, 1, (1, 16, 8, 8)).astype(np.float32)
arrays = {
    "good": {"x": x, "y": y},
    "wrong-name": {"x": x, "why": y},
    "wrong-shape": {"x": x[..., :9].copy(), "y": y},
    "wrong-dtype": {"x": x.astype(np.float64), "y": y},
    "missing": {"x": x},
}[kind]
np.savez(out, **arrays)

"""int8 4N IO through tpuc sim: writes a float input, then checks the output
equals numpy's quantization (round half to even, saturate) at scale 1/32.

usage: int8_io.py inputs IN_NPZ | int8_io.py check IN_NPZ OUT_NPZ
"""
import sys

import numpy as np

if sys.argv[1] == "inputs":
    rng = np.random.default_rng(3)
    x = rng.uniform(-5, 5, (5, 3, 7)).astype(np.float32)  # beyond +-127/32: saturates
    x[0, 0, :3] = [0.015625, 0.046875, -0.015625]           # exact halves: 0.5, 1.5, -0.5 steps
    np.savez(sys.argv[2], **{"in": x})
    sys.exit(0)
x = np.load(sys.argv[2])["in"]
out = np.load(sys.argv[3])["out"]
q = np.clip(np.rint(x / np.float32(0.03125)), -128, 127)
ref = (q * 0.03125).astype(np.float32) + np.float32(0)  # int8 has no -0
print("out", out.dtype, list(out.shape), "equal" if out.tobytes() == ref.tobytes() else "DIFFERENT")
print("halves", list(out[0, 0, :3]))
print("saturated", int((q == 127).sum() + (q == -128).sum()) > 0)

"""The sample program tests/data/asm/conv_add.s, checked against numpy.

usage: conv_add_ref.py inputs S_FILE IN_NPZ          writes seeded inputs x, y
       conv_add_ref.py check S_FILE IN_NPZ OUT_NPZ [OTHER_NPZ]
           compares z with numpy (and requires OTHER_NPZ's z to be bit-identical)
The weights and biases are read from the program's own coefficient data.
"""
import os
import re
import sys

import numpy as np

mode, s_file, in_npz = sys.argv[1:4]
if mode == "inputs":
    rng = np.random.default_rng(5)
    np.savez(in_npz, x=rng.uniform(-1, 1, (1, 8, 10, 10)).astype(np.float32),
             y=rng.uniform(-1, 1, (1, 16, 8, 8)).astype(np.float32))
    sys.exit(0)

text = open(s_file).read()
weights = np.fromfile(os.path.join(os.path.dirname(s_file), "conv_add_weights.bin"),
                      dtype=np.float32).reshape(16, 8, 3, 3)
bias = np.frombuffer(bytes.fromhex("".join(re.findall(r"^\.coeff_data (\S+)", text, re.M))),
                     dtype=np.float32)
inputs, out = np.load(in_npz), np.load(sys.argv[4])
x, y, z = inputs["x"][0], inputs["y"][0], out["z"]
ref = np.zeros((16, 8, 8), np.float64)
for ky in range(3):
    for kx in range(3):
        ref += np.einsum("oi,ihw->ohw", weights[:, :, ky, kx], x[:, ky:ky + 8, kx:kx + 8])
ref += bias[:, None, None] + y
err = float(np.abs(z.reshape(16, 8, 8) - ref).max())
print(f"z shape {list(z.shape)} max abs error {err:.3g}")
if len(sys.argv) > 5:
    other = np.load(sys.argv[5])["z"]
    print("bit-identical" if other.tobytes() == z.tobytes() else "DIFFERENT")
sys.exit(0 if z.shape == (1, 16, 8, 8) and err < 1e-5 else 1)

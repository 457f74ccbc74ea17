# Writes the weights of data_movement.top.mlir (gather indices, the zeros a
# channel pad concatenates, a class token), 8 calibration samples and a test input into
# the directory argv[1] (fixed seed).
import os
import sys

import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(5)
np.savez(os.path.join(out, "data_movement_weights.npz"), idx=np.array([4, 0, 1, -2], dtype=np.int64),
         zeros=np.zeros((2, 2, 3, 5), np.float32), cls=rng.normal(0, 1, (2, 1, 3, 5)).astype(np.float32))


def sample():
    return {"x": rng.normal(0, 1, (2, 4, 3, 5)).astype(np.float32), "z": rng.normal(0, 1, (2, 1, 3, 1)).astype(np.float32)}


os.makedirs(os.path.join(out, "samples"), exist_ok=True)
for i in range(8):
    np.savez(os.path.join(out, "samples", f"s{i}.npz"), **sample())
np.savez(os.path.join(out, "in.npz"), **sample())

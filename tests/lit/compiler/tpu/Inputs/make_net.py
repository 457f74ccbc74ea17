# Writes the weights of net.top.mlir, calibration samples and a test input
# into the directory argv[1] (fixed seed).
import os
import sys

import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(7)
w = {
    "w1": rng.normal(0, 0.3, (8, 3, 3, 3)),
    "b1": rng.normal(0, 0.1, (8,)),
    "w2": rng.normal(0, 0.3, (8, 8, 1, 1)),
    "b2": rng.normal(0, 0.1, (8,)),
    "fw": rng.normal(0, 0.3, (5, 8)),
    "fb": rng.normal(0, 0.1, (5,)),
}
np.savez(os.path.join(out, "net_weights.npz"), **{k: v.astype(np.float32) for k, v in w.items()})
os.makedirs(os.path.join(out, "samples"), exist_ok=True)
for i in range(8):
    x = rng.normal(0, 1, (1, 3, 16, 16)).astype(np.float32)
    np.savez(os.path.join(out, "samples", f"s{i}.npz"), input=x)
np.savez(os.path.join(out, "in.npz"), input=rng.normal(0, 1, (1, 3, 16, 16)).astype(np.float32))

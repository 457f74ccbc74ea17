# Writes the weights of det_ops.top.mlir, 8 calibration samples and a test
# input into the directory argv[1] (fixed seed).
import os
import sys

import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(11)
w = {
    "w1": rng.normal(0, 0.3, (20, 3, 3, 3)),
    "gamma": rng.normal(1, 0.3, (20,)),
    "beta": rng.normal(0, 0.3, (20,)),
    "mean": rng.normal(0, 0.3, (20,)),
    "var": rng.uniform(0.3, 1.5, (20,)),
    "scale": np.array([0.9]),
    "shift": np.array([-0.2]),
    "w2": rng.normal(0, 0.3, (20, 20, 1, 1)),
    "b2": rng.normal(0, 0.3, (20,)),
    "wt": rng.normal(0, 0.3, (20, 1, 2, 2)),
    "bt": np.array([0.1]).reshape(1, 1, 1, 1),
}
np.savez(os.path.join(out, "det_ops_weights.npz"), **{k: v.astype(np.float32) for k, v in w.items()})
os.makedirs(os.path.join(out, "samples"), exist_ok=True)
for i in range(8):
    x = rng.normal(0, 1, (1, 3, 16, 16)).astype(np.float32)
    np.savez(os.path.join(out, "samples", f"s{i}.npz"), input=x)
np.savez(os.path.join(out, "in.npz"), input=rng.normal(0, 1, (1, 3, 16, 16)).astype(np.float32))

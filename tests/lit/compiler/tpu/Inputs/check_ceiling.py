# Recomputes `tpuc qtable --activation-ceiling` on net.top.mlir in NumPy: the
# net in fp32 with every tensor the INT8 Tpu module holds in int8 rounded at
# its scale (round half to even, saturated), those the ceiling's output lists
# left unrounded; prints whether the recorded cosines (all rounded, and with
# the listed tensors unrounded) are the same.
#   check_ceiling.py CEILING.txt WEIGHTS.npz MODULE.tpu.mlir SAMPLE.npz
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "..", "models"))
from quant_headroom import read_tpu_module  # noqa: E402  (the int8 tensors of a Tpu module, by name)

ceiling, weights, module, sample = sys.argv[1:5]
text = open(ceiling).read()
recorded_all = float(re.search(r"# all rounded: cosine ([0-9.]+)", text).group(1))
listed = re.findall(r"^# (\S+) cosine ([0-9.]+) with this", text, re.M)
w = np.load(weights)
int8 = read_tpu_module(module)


def conv(x, k, b, pad):
    n, c, h, wd = x.shape
    o, _, kh, kw = k.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    y = np.zeros((n, o, h, wd), np.float64)
    for i in range(kh):
        for j in range(kw):
            y += np.einsum("nchw,oc->nohw", xp[:, :, i:i + h, j:j + wd], k[:, :, i, j])
    return y + b.reshape(1, -1, 1, 1)


def pool(x, f):
    n, c, h, wd = x.shape
    return f(x.reshape(n, c, h // 2, 2, wd // 2, 2), axis=(3, 5))


def run(x, unrounded):
    def q(name, v):
        if name not in int8 or name in unrounded:
            return v
        s, unsigned = int8[name]
        v = np.float32(v)
        code = np.clip(np.round(v * np.float32(1 / np.float32(s))), 0 if unsigned else -128, 255 if unsigned else 127)
        return np.float64(code * np.float32(s))

    x = q("input", x)
    r1 = q("relu1", np.maximum(conv(x, w["w1"], w["b1"], 1), 0))
    p1 = q("pool1", pool(r1, np.max))
    c2 = q("conv2", conv(p1, w["w2"], w["b2"], 0))
    r2 = q("relu2", np.maximum(q("add", c2 + p1), 0))
    g = q("gap", q("pool2", pool(r2, np.mean)).mean(axis=(2, 3)))
    return q("output", g @ w["fw"].T + w["fb"]).ravel()


def cosine(a, b):
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


x = np.load(sample)["input"].astype(np.float64)
exact = run(x, set(int8))
checks = [(recorded_all, cosine(exact, run(x, set())))]
for k in range(len(listed)):
    checks.append((float(listed[k][1]), cosine(exact, run(x, {n for n, _ in listed[:k + 1]}))))
ok = all(abs(a - b) < 1e-5 for a, b in checks)
print("check_ceiling: " + ", ".join(f"recorded {a:.6f} numpy {b:.6f}" for a, b in checks) +
      (": same" if ok else ": DIFFERENT"))
sys.exit(0 if ok else 1)

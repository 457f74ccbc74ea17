"""Weights for fold_weights.mlir (mode 'make') and the check of the folded file (mode 'check').

usage: fold_weights.py make DIR | fold_weights.py check DIR
"""
import sys

import numpy as np

mode, d = sys.argv[1], sys.argv[2]
w = (np.arange(4 * 3 * 3 * 3, dtype=np.float32).reshape(4, 3, 3, 3) - 50) / 100
bias = np.array([0.5, -0.5, 1.0, 0.0], np.float32)
g = np.array([1, 2, 3, 4], np.float32)
b = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
m = np.array([0.0, 1.0, -1.0, 2.0], np.float32)
v = np.array([1.0, 4.0, 0.25, 2.0], np.float32)
c = np.array([1, 2, 3, 4], np.float32).reshape(1, 4, 1, 1)
e = np.array([10, 20, 30, 40], np.float32).reshape(4, 1, 1)
k = np.array(4.0, np.float32)
s = np.array(3.0, np.float32)
w3 = (np.arange(16, dtype=np.float32).reshape(4, 1, 2, 2) - 8) / 10
g3 = np.array([2.0, -1.0], np.float32)
b3 = np.array([0.5, 0.25], np.float32)
m3 = np.array([1.0, -2.0], np.float32)
v3 = np.array([3.0, 0.5], np.float32)
arrays = dict(w=w, w2=w, bias=bias, g=g, b=b, m=m, v=v, c=c, e=e, k=k, g2=g, b2=b, m2=m, v2=v, s=s,
              w3=w3, g3=g3, b3=b3, m3=m3, v3=v3)

if mode == "make":
    np.savez(d + "/w.npz", **arrays)
    sys.exit(0)

f = np.load(d + "/w_folded.npz")
scale = g / np.sqrt(v + 1e-5)
checks = {
    # batch_norm(conv(x, w)) -> conv(x, w * scale, b - m * scale)
    "w_folded": w * scale.reshape(4, 1, 1, 1),
    "w_bias_folded": b - m * scale,
    # conv(x, w2, bias) * c + e
    "w2_folded_folded": w * c.reshape(4, 1, 1, 1),
    "w2_folded_bias_folded": bias * c.ravel() + e.ravel(),
    # x / k -> x * (1 / k)
    "k_reciprocal": np.float32(1) / k,
    # batch_norm(conv_transpose(x, w3, group 2)): filter [ic, oc/g, k, k], input channel i feeds group i // 2
    "w3_folded": w3 * (g3 / np.sqrt(v3 + 1e-5))[np.arange(4) // 2].reshape(4, 1, 1, 1),
    "w3_bias_folded": b3 - m3 * g3 / np.sqrt(v3 + 1e-5),
    # batch_norm(...) * s -> scale and bias times s
    "g2_folded": g * s,
    "b2_folded": b * s,
}
for name, want in checks.items():
    got = f[name]
    assert got.shape == np.shape(want), (name, got.shape, np.shape(want))
    assert np.allclose(got, want, rtol=1e-6, atol=1e-6), (name, got, want)
print("folded weights OK:", ", ".join(sorted(f.keys())))

#!/usr/bin/python3
"""Prints "N outputs equal" when every output of A.npz is in B.npz with the same
shape and values (integers compared as integers); else names the first that
differs and exits 1."""
import sys

import numpy as np

a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
for k in a.files:
    x, y = a[k], b[k] if k in b.files else None
    if y is None or x.shape != y.shape or not np.array_equal(x.astype(np.float64), y.astype(np.float64)):
        print(f"{k}: differs ({x.shape} against {None if y is None else y.shape})")
        sys.exit(1)
print(f"{len(a.files)} outputs equal")

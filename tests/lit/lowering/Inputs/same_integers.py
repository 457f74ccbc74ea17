"""same_integers.py A.npz B.npz NAME...: the named outputs (indices) hold
the same integers in both archives, whatever their dtypes; prints how many
were compared. Exit 1 on a difference, a non-integer value or a missing output."""
import sys

import numpy as np

a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
for name in sys.argv[3:]:
    if name not in a.files or name not in b.files:
        sys.exit(f"same_integers: '{name}' is missing")
    x, y = a[name].astype(np.float64), b[name].astype(np.float64)
    if x.shape != y.shape or not np.array_equal(x, y) or not np.array_equal(x, np.round(x)):
        sys.exit(f"same_integers: '{name}' differs or is not integral")
print(f"{len(sys.argv) - 3} integer outputs equal")

# Scores INT8 Tpu modules against the fp32 reference: argv[1] the reference
# .npz, argv[2] the directory holding in.npz and <stem>.tpu.mlir, argv[3:]
# the stems (the first is the baseline). Runs each on in.npz (tpuc run),
# prints every cosine to stderr and, on stdout, the stems whose output
# cosine is higher than the baseline's.
import subprocess
import sys

import numpy as np


def cosine(a, b):
    a, b = a.ravel().astype(np.float64), b.ravel().astype(np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


ref = np.load(sys.argv[1])["output"]
d = sys.argv[2]
scores = {}
for stem in sys.argv[3:]:
    out = f"{d}/{stem}_score.npz"
    subprocess.run(["tpuc", "run", f"{d}/{stem}.tpu.mlir", "--input", f"{d}/in.npz", "-o", out], check=True)
    scores[stem] = cosine(ref, np.load(out)["output"])
base = sys.argv[3]
for stem, c in scores.items():
    print(f"score_levers: {stem} cosine {c:.5f}", file=sys.stderr)
print("better than signed int8 + max: " + " ".join(s for s in sys.argv[4:] if scores[s] > scores[base]))

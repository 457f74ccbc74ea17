# Checks a quantize table's last recorded cosine against a full run: the
# min over the first N samples and every output of the cosine between the
# Top interpreter and the Tpu interpreter of the module deployed with the
# table (qtable evaluates incrementally; this runs every op).
# With `mean`, the mean over the samples of each sample's smallest cosine
# (tpuc qtable --over-samples mean).
#   check_qtable_cosine.py TABLE TOP.mlir MIXED.tpu.mlir SAMPLE_DIR N [mean]
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

table, top, tpu, samples, n = sys.argv[1:6]
mean = sys.argv[6:] == ["mean"]
recorded = float(re.findall(r"# cosine ([0-9.]+)", open(table).read())[-1])
per_sample = []
with tempfile.TemporaryDirectory() as tmp:
    for name in sorted(os.listdir(samples))[:int(n)]:
        path = os.path.join(samples, name)
        ref, got = os.path.join(tmp, "ref.npz"), os.path.join(tmp, "got.npz")
        subprocess.run(["tpuc", "run", top, "--input", path, "-o", ref], check=True, capture_output=True)
        subprocess.run(["tpuc", "run", tpu, "--input", path, "-o", got], check=True, capture_output=True)
        r, g = np.load(ref), np.load(got)
        cosines = []
        for k in r.files:
            a, b = r[k].ravel().astype(np.float64), g[k].ravel().astype(np.float64)
            cosines.append(float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b))))
        per_sample.append(min(cosines))
worst = float(np.mean(per_sample)) if mean else min(per_sample)
ok = abs(worst - recorded) < 2e-6
print(f"check_qtable_cosine: recorded {recorded:.6f}, full run {worst:.6f}: {'same' if ok else 'DIFFERENT'}")
sys.exit(0 if ok else 1)

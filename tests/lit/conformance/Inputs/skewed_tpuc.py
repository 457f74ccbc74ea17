# A tpuc that computes wrong on the chip: runs the tpuc on PATH, then adds 1
# to every output of `tpuc run ... --backend func` (the harness must call it
# WRONG, listed or not).
import subprocess
import sys

import numpy as np

args = sys.argv[1:]
rc = subprocess.call(["tpuc"] + args)
if rc == 0 and args[:1] == ["run"] and "func" in args:
    out = args[args.index("-o") + 1]
    arrays = {k: v + 1 for k, v in np.load(out).items()}
    np.savez(out, **arrays)
sys.exit(rc)

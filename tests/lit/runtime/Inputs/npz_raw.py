"""npz <-> the raw files of bmrt_example (runtime/examples/bmrt_example.c: each tensor's bytes, 1N, C order).
  npz_raw.py to-raw in.npz NAME[,NAME...] out.bin      the named arrays, in that order
  npz_raw.py same out.bin ref.npz NAME[,NAME...]       exit 0 when out.bin holds exactly the named arrays' bytes
"""
import sys

import numpy as np

cmd = sys.argv[1]
if cmd == "to-raw":
    arrays = np.load(sys.argv[2])
    with open(sys.argv[4], "wb") as f:
        for name in sys.argv[3].split(","):
            f.write(np.ascontiguousarray(arrays[name]).tobytes())
elif cmd == "same":
    got = open(sys.argv[2], "rb").read()
    arrays = np.load(sys.argv[3])
    want = b"".join(np.ascontiguousarray(arrays[n]).tobytes() for n in sys.argv[4].split(","))
    print(f"{len(got)} bytes, equal {got == want}")
    sys.exit(0 if got == want else 1)
else:
    sys.exit(f"unknown command {cmd}")

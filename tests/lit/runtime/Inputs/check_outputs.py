"""Checks tpuc sim's output files: z is float32 [1,16,8,8]; the trace has TIU and
GDMA tracks with some GDMA event overlapping some TIU event; stats name both engines."""
import json
import sys

import numpy as np

out_npz, trace_json, stats_json = sys.argv[1:4]
z = np.load(out_npz)["z"]
print("z", z.dtype, list(z.shape))
trace = json.load(open(trace_json))["traceEvents"]
tracks = {e["tid"]: e["args"]["name"] for e in trace if e.get("ph") == "M" and e.get("name") == "thread_name"}
spans = {}
for e in trace:
    if e.get("ph") == "X":
        spans.setdefault(tracks[e["tid"]], []).append((e["ts"], e["ts"] + e["dur"]))
overlap = any(g0 < t1 and t0 < g1 for t0, t1 in spans["TIU"] for g0, g1 in spans["GDMA"])
print("tracks", sorted(k for k in spans if k in ("TIU", "GDMA")), "overlap", overlap)
stats = json.load(open(stats_json))
print("stats engines", sorted(stats["engines"].keys()), "cycles>0", stats["total_cycles"] > 0)

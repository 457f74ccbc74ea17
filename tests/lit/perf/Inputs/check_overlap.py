# Reads fit_timing's JSON for one bmodel under each --overlap model (argv:
# compiled prefetch group program) and prints how the bounds order: the
# counterfactual overlaps may only take time away, the whole-program bound
# the most.
import json
import sys

ms = {}
for path in sys.argv[1:]:
    with open(path) as f:
        out = json.load(f)
    ms[path.rsplit("/", 1)[-1].split(".")[0]] = out["rows"][0]["simulated_ms"]
c, p, g, w = ms["compiled"], ms["prefetch"], ms["group"], ms["program"]
print(f"prefetch < compiled {p < c}")
print(f"group <= compiled {g <= c}")
print(f"program <= group {w <= g}")
print(f"program <= prefetch {w <= p}")

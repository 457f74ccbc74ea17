#!/usr/bin/env python3
"""Checks the layering of docs/architecture.md on a source tree.

Rooms, lowest first; a file may include headers of its own room and of rooms
below it, never above:
  support <- isa <- arith <- kernels <- memory <- timing <- simulator <- runtime <- compiler <- tools
except that compiler/ reaches the simulator only through the runtime: it
includes arith/, kernels/, memory/ and timing/, never simulator/. Inside rooms:
simulator/semantics does not include simulator/systemc; MLIR and LLVM headers
appear only in compiler/ outside compiler/Backend (and in tools/); SystemC
headers only in simulator/systemc/. tests/, perf/, fuzz/ and python/
sit on top and may include anything.

Usage: check-layers.py [ROOT]   (default: the repository holding this script)
Prints one line per violation, "path:line: message", and exits 1 if any.
"""
import os
import re
import sys

ROOMS = ["support", "isa", "arith", "kernels", "memory", "timing", "simulator", "runtime", "compiler", "tools"]
RANK = {room: i for i, room in enumerate(ROOMS)}
SKIPPED = {("compiler", "simulator")}  # (room, room below it that it must not include)
SOURCE_SUFFIXES = (".h", ".hpp", ".c", ".cc", ".cpp", ".def", ".inc")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def violations_of(path, included, quoted):
    """The rules `path` (relative to the root, '/'-separated) breaks by including `included`."""
    room = path.split("/", 1)[0]
    target = included.split("/", 1)[0]
    if quoted and room in RANK and target in RANK and RANK[target] > RANK[room]:
        yield f"{room}/ must not include {target}/ (above it): \"{included}\""
    if quoted and (room, target) in SKIPPED:
        yield f"{room}/ must not include {target}/ (only through the rooms between): \"{included}\""
    if path.startswith("simulator/semantics/") and included.startswith("simulator/systemc/"):
        yield f"simulator/semantics is plain C++ and must not include the SystemC model: \"{included}\""
    if target in ("mlir", "llvm"):
        mlir_room = room == "tools" or (room == "compiler" and not path.startswith("compiler/Backend/"))
        if room in RANK and not mlir_room:
            yield f"only compiler/ outside Backend/ uses MLIR/LLVM: \"{included}\""
    if target in ("systemc", "systemc.h", "tlm", "tlm.h") and room in RANK and \
            not path.startswith("simulator/systemc/"):
        yield f"only simulator/systemc/ uses SystemC: <{included}>"


def check_tree(root):
    """Yields "path:line: message" for every violation under `root`."""
    for room in ROOMS:
        top = os.path.join(root, room)
        for directory, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if d not in ("node_modules", "__pycache__"))
            for name in sorted(files):
                if not name.endswith(SOURCE_SUFFIXES):
                    continue
                full = os.path.join(directory, name)
                rel = os.path.relpath(full, root).replace(os.sep, "/")
                with open(full, encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        for message in violations_of(rel, m.group(2), m.group(1) == '"'):
                            yield f"{rel}:{number}: {message}"


def main(argv):
    if len(argv) > 2:
        print("usage: check-layers.py [ROOT]", file=sys.stderr)
        return 2
    root = argv[1] if len(argv) == 2 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if not os.path.isdir(os.path.join(root, "isa")):
        print(f"check-layers: error: {root}: not a source tree (no isa/)", file=sys.stderr)
        return 2
    found = list(check_tree(root))
    for v in found:
        print(v)
    if found:
        print(f"check-layers: {len(found)} layering violation(s) (docs/architecture.md)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

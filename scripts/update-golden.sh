#!/usr/bin/env bash
# Rewrites the expected files of the golden timing tests (tests/data/golden/
# *.stats, see docs/timing.md "Golden timing tests") after a deliberate change
# of the timing model: runs the same ctest cases with GOLDEN_UPDATE=1, which
# makes tests/golden/golden.py write instead of compare. Review `git diff
# tests/data/golden` and commit it with the change that explains it.
#   bash scripts/update-golden.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
ninja -C "$build" tpuc golden_estimate_cycles
GOLDEN_UPDATE=1 ctest --test-dir "$build" -R '^golden\.' --output-on-failure
git -C "$root" status --short tests/data/golden

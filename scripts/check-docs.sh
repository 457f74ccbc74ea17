#!/usr/bin/env bash
# Are the published figures current? Fails (exit 1) when
#  - a generated table in docs/ (or README) has no provenance line, or its commit is older than the last
#    change to the code it measures (perf/provenance.py stale: git log <commit>..HEAD -- <measured paths>);
#  - the quick subset of a generator, re-run on the current build, gives a cell other than the committed
#    one (the simulator and compiler are deterministic: the stated noise is none, wall times excepted).
#   bash scripts/check-docs.sh [--stale-only] [BUILD_DIR]       (BUILD_DIR defaults to ./build)
# The quick subsets: conformance_counts --check (the pinned counts files), validate_latency --check (retinaface_mnet025, 3 modes), validate_resnet50 --check
# (FP32 b1), zoo_table --check mobilenet_v3_large (one CI zoo model, F32 + INT8), layer_bench --check (conv 3x3
# FP32 b1, add INT8 b1), int8_ablation --check
# (MediaPipe face full range, the default-calibration column, the published run's settings).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
stale_only=0
[[ ${1:-} == --stale-only ]] && { stale_only=1; shift; }
build=$(cd "${1:-$root/build}" && pwd)
py=/usr/bin/python3
tpuc=$build/tools/tpuc/tpuc
work=$build/check-docs
failed=()
step() {
  local name=$1; shift
  local t0=$SECONDS
  echo "== $name"
  if "$@"; then echo "== $name: ok ($((SECONDS - t0)) s)"; else echo "== $name: FAILED ($((SECONDS - t0)) s)"; failed+=("$name"); fi
}
step "stamps current" "$py" "$root/perf/provenance.py" stale --root "$root"
if ((!stale_only)); then
  step "conformance counts" "$py" "$root/perf/conformance_counts.py" --check
  step "latency set (quick)" "$py" "$root/perf/validate_latency.py" --check --tpuc "$tpuc" \
    --fit-timing "$build/perf/fit_timing" --work "$work/latency"
  step "resnet50 (quick)" "$py" "$root/perf/validate_resnet50.py" --check --tpuc "$tpuc" --work "$work/resnet50"
  step "zoo (quick)" "$py" "$root/perf/zoo_table.py" --check mobilenet_v3_large --tpuc "$tpuc" --work "$work/zoo"
  step "layer bench (quick)" "$py" "$root/perf/layer_bench.py" --check --tpuc "$tpuc" --work "$work/layer-bench"
  step "int8 ablation (quick)" "$py" "$root/perf/int8_ablation.py" --check --tpuc "$tpuc" --work "$work/ablation" \
    --models face_full --columns default --qtable none --cali 32 --test 6 --tune-samples 2
fi
if ((${#failed[@]})); then
  echo "check-docs: FAILED: ${failed[*]} (the commands: docs/validation.md, 'Regenerating the tables')"
  exit 1
fi
echo "check-docs: every generated table is current"

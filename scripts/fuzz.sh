#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang, -DTPU_FUZZ=ON) in their own build
# folder, seeds each corpus from the project's own files and runs every target
# for a bounded time, one after the other. Results: docs/reliability.md.
#   bash scripts/fuzz.sh [target...]          (default: every target)
# Environment:
#   FUZZ_SECONDS   time per target (default 60)
#   FUZZ_RUNS      stop a target after this many executions instead (0 = time only)
#   FUZZ_BUILD_DIR build folder (default ./build-fuzz)
#   FUZZ_WORK      corpora, crash artifacts, logs (default $FUZZ_BUILD_DIR/fuzz-work)
# A crash leaves its input in $FUZZ_WORK/crashes/<target>/; reproduce with
#   $FUZZ_BUILD_DIR/fuzz/<target> <crash-file>
# Exit status 1 if any target crashed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
work=${FUZZ_WORK:-$build/fuzz-work}
seconds=${FUZZ_SECONDS:-60}
runs=${FUZZ_RUNS:-0}
all=(fuzz_bmodel fuzz_onnx fuzz_tflite fuzz_npz fuzz_hwconfig fuzz_asm fuzz_command fuzz_calibration)
targets=("$@")
((${#targets[@]})) || targets=("${all[@]}")

if [[ ! -f $build/build.ninja ]]; then
  CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DTPU_FUZZ=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" \
    "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1" >/dev/null
fi
# (The list is read once: grep -q on a live pipe would fail it under pipefail.)
configured=$(ninja -C "$build" -t targets all)
built=()
for t in "${targets[@]}"; do
  grep -q "^$t:" <<<"$configured" && built+=("$t") ||
    echo "fuzz: $t is not configured (its sources are missing), skipped" >&2
done
targets=("${built[@]}")
ninja -C "$build" fuzz_seeds "${targets[@]}" >/dev/null

# Seeds: the project's own inputs (tests, sample programs, models, ONNX node tests).
seeds=$work/seeds
rm -rf "$seeds"
mkdir -p "$seeds"/{fuzz_bmodel,fuzz_command,fuzz_asm,fuzz_npz,fuzz_onnx,fuzz_tflite,fuzz_hwconfig,fuzz_calibration}
mapfile -t asm < <(find "$root/tests" -name '*.s' -not -path '*/build*' | sort)
cp "${asm[@]}" "$seeds/fuzz_asm/"
"$build/fuzz/fuzz_seeds" "$seeds/fuzz_bmodel" "$seeds/fuzz_command" "${asm[@]}" >&2
# The bmodels TPU-MLIR made (BM1684 and BM1684X): what other compilers write, and the BM1684X streams.
cp "$root"/tests/data/bm1684/*.bmodel "$root"/tests/data/bm1684x/*.bmodel "$seeds/fuzz_bmodel/"
# Small arrays only: big members make every execution slow without new paths.
find "$root/tests" "$root/models/out" \( -name '*.npz' -o -name '*.npy' \) -size -64k \
  -not -path '*/build*' -exec cp --backup=numbered -t "$seeds/fuzz_npz/" {} + 2>/dev/null || true
i=0
for m in /usr/share/libonnx-testdata/data/node/*/model.onnx; do
  [[ -f $m ]] && cp "$m" "$seeds/fuzz_onnx/$((i++)).onnx"
done
find "$root/tests" -name '*.onnx' -size -64k -not -path '*/build*' \
  -exec cp --backup=numbered -t "$seeds/fuzz_onnx/" {} + 2>/dev/null || true
# TFLite: the lit tests' JSON models compiled with flatc, and the smaller MediaPipe models.
for j in "$root"/tests/lit/compiler/Inputs/tflite/*.json; do
  flatc -b -o "$seeds/fuzz_tflite" "$root/compiler/Import/tflite/schema.fbs" "$j"
done
find "$root/models/out/mediapipe" -name '*.tflite' -size -300k \
  -exec cp --backup=numbered -t "$seeds/fuzz_tflite/" {} + 2>/dev/null || true
cat >"$seeds/fuzz_hwconfig/bm1684.json" <<'JSON'
{"npuLanes": 64, "euBytes": 128, "lmemBytesPerLane": 524288, "lmemBanks": 8,
 "dmaAlignBytes": 512, "coeffAlignBytes": 4096, "globalMemBase": 4294967296,
 "globalMemBytes": 4294967296, "l2SramBytes": 4194304, "clockMhz": 550.0,
 "ddrBandwidthGBs": 32.0, "ddrLatencyNs": 200.0, "ddrBurstBytes": 64,
 "lmemBandwidthBytesPerCycle": 512.0, "tiuStartupCycles": 40, "gdmaStartupCycles": 60,
 "lutCyclesPerElement": 1, "divideCycles": 8, "int8ConvChannelsPerCycle": 2}
JSON
find "$root/tests" -name '*.json' -size -64k -not -path '*/build*' \
  -exec cp --backup=numbered -t "$seeds/fuzz_hwconfig/" {} + 2>/dev/null || true
printf '# method: max\n# name threshold min max\ninput 2.5 -2.5 1.75\nconv1 6.0 0 6.0\n' \
  >"$seeds/fuzz_calibration/max.txt"
printf '# method: kl\nx 0.125 -0.5 0.5\n/blocks.0/Relu_output_0 1e-3 0 3.25\n' \
  >"$seeds/fuzz_calibration/kl.txt"
find "$root/tests" "$root/models/out" \( -name '*calibration*' -o -name '*.cali' -o -name '*_cali_table*' \) \
  -type f -size -64k -not -path '*/build*' -exec cp --backup=numbered -t "$seeds/fuzz_calibration/" {} + 2>/dev/null || true

status=0
printf '%-18s %12s %8s %8s %s\n' target executions seconds crashes corpus >&2
for t in "${targets[@]}"; do
  # Crash inputs of earlier runs are not counted again (the ones that mattered
  # are kept under tests/data/regress/<target>/).
  rm -rf "$work/crashes/$t"
  mkdir -p "$work/corpus/$t" "$work/crashes/$t" "$work/logs"
  log=$work/logs/$t.log
  args=(-max_total_time="$seconds" -print_final_stats=1 -rss_limit_mb=2048 -timeout=25
        -artifact_prefix="$work/crashes/$t/")
  ((runs > 0)) && args+=(-runs="$runs")
  [[ $t == fuzz_command ]] && args+=(-max_len=4096)
  # Whole models as seeds, mutated in their first 8 KiB: far more executions per second.
  [[ $t == fuzz_tflite ]] && args+=(-max_len=8192)
  start=$SECONDS
  rc=0
  "$build/fuzz/$t" "${args[@]}" "$work/corpus/$t" "$seeds/$t" >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  crashes=$(find "$work/crashes/$t" -type f | wc -l)
  printf '%-18s %12s %8s %8s %s\n' "$t" "${execs:-?}" "$((SECONDS - start))" "$crashes" \
    "$(find "$work/corpus/$t" -type f | wc -l) files" >&2
  if ((rc != 0 || crashes > 0)); then
    status=1
    echo "fuzz: $t failed (exit $rc), log $log" >&2
    grep -m3 -E 'ERROR|SUMMARY|runtime error' "$log" >&2 || true
  fi
done
exit $status

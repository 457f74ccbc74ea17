#!/usr/bin/env bash
# tpuc sweep end to end on the hand-written conv_add program: 2 DDR
# bandwidths x 2 lane counts run by the local worker pool; the job list run
# by a plain shell loop and collected gives the same rows; a model that does
# not build leaves error rows that --resume reruns; bad sweep files fail
# with one line, exit 2. (GNU Parallel and Slurm: sweep_parallel.sh, sweep_slurm.sh.)
# Usage: sweep_cli.sh <tpuc> <source dir> <work dir>
set -euo pipefail
TPUC=$1 SRC=$2 W=$3
rm -rf "$W" && mkdir -p "$W"
cd "$W"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$TPUC" asm "$SRC/tests/data/asm/conv_add.s" -o conv_add.bmodel
cat > sweep.json <<'JSON'
{"models": [{"bmodel": "conv_add.bmodel"}],
 "hardware": {"ddrBandwidthGBs": [4, 32], "npuLanes": [32, 64]}}
JSON

"$TPUC" sweep sweep.json --out-dir out -j 2 > stdout.txt 2> progress.txt
grep -q "^4 points$" stdout.txt || fail "no point count: $(cat stdout.txt)"
grep -q "simulate \[##############################\] 4/4" progress.txt || fail "no progress bar"
for f in sweep.csv sweep.jsonl latency_vs_ddr.svg roofline_conv_add_given_lg.svg; do
  [ -s "out/$f" ] || fail "missing out/$f"
done
[ "$(wc -l < out/sweep.csv)" = 5 ] || fail "expected 4 rows"
head -1 out/sweep.csv | grep -q "^point,model,quantize,layer_group,ddrBandwidthGBs,npuLanes,latency_us,total_cycles,tiu_utilization,gdma_utilization,ddr_bytes,lmem_peak_bytes,compile_s,sim_wall_s,chip,bmodel,error$" \
  || fail "header: $(head -1 out/sweep.csv)"
# Rows in point order, the last key (npuLanes) varying fastest.
cut -d, -f1,5,6 out/sweep.csv | tail -4 | tr '\n' ' ' | grep -q "^p0000,4,32 p0001,4,64 p0002,32,32 p0003,32,64 $" \
  || fail "row order: $(cut -d, -f1,5,6 out/sweep.csv | tr '\n' ' ')"
# Each point simulated its own config: less DDR bandwidth is slower at equal lanes.
awk -F, 'NR>1 {lat[$5","$6]=$7} END {exit !(lat["4,32"] > lat["32,32"] && lat["4,64"] > lat["32,64"])}' out/sweep.csv \
  || fail "latency does not fall with bandwidth: $(cat out/sweep.csv)"
# LMEM peak from the stats: the sum z at lane offset 0x50000, 16 channels of
# 8x8 fp32 (one per lane, 256 bytes) is the highest buffer at every point.
awk -F, 'NR>1 && $12 != 327936 {exit 1}' out/sweep.csv \
  || fail "lmem_peak_bytes: $(cut -d, -f1,12 out/sweep.csv | tr '\n' ' ')"
grep -q '"ddrBandwidthGBs": 4' out/points/p0000.config.json || fail "point config"
[ "$(wc -l < out/sweep.jsonl)" = 4 ] || fail "jsonl rows"
grep -q "<svg" out/latency_vs_ddr.svg && grep -q "npuLanes=32" out/latency_vs_ddr.svg || fail "latency plot"
grep -q "class=\"roof\"" out/roofline_conv_add_given_lg.svg || fail "roofline plot"

# Deterministic: one worker gives the same figures (wall times aside).
"$TPUC" sweep sweep.json --out-dir out1 -j 1 --quiet > /dev/null 2> quiet.txt
[ ! -s quiet.txt ] || fail "--quiet printed: $(cat quiet.txt)"
diff <(cut -d, -f1-12 out/sweep.csv) <(cut -d, -f1-12 out1/sweep.csv) || fail "-j 1 differs from -j 2"
cmp out/latency_vs_ddr.svg out1/latency_vs_ddr.svg || fail "plot differs"

# The job list: one task line per point, run by a shell loop, then collected.
"$TPUC" sweep sweep.json --out-dir out2 --jobs-file jobs.txt > /dev/null 2>&1
[ "$(wc -l < jobs.txt)" = 4 ] || fail "jobs.txt lines"
grep -q "^$TPUC sweep $W/sweep.json --out-dir $W/out2 --points 3 --quiet > $W/out2/tasks/points_3.log 2>&1$" jobs.txt \
  || fail "job line: $(tail -1 jobs.txt)"
set +e
"$TPUC" sweep sweep.json --out-dir out2 --collect > collect_early.txt 2>&1
rc=$?
set -e
[ $rc = 2 ] || fail "collect before the jobs ran: exit $rc"
grep -q "tpuc sweep: error: 4 of 4 points failed (first p0000: not run yet (no $W/out2/points/p0000.row.json))" collect_early.txt \
  || fail "early collect: $(cat collect_early.txt)"
grep -q "^p0003,conv_add,given,on,32,64,,,,,,,0.000,,.*,not run yet" out2/sweep.csv || fail "missing row: $(tail -1 out2/sweep.csv)"
while IFS= read -r line; do sh -c "$line"; done < jobs.txt
"$TPUC" sweep sweep.json --out-dir out2 --collect > /dev/null 2>&1
diff <(cut -d, -f1-12 out/sweep.csv) <(cut -d, -f1-12 out2/sweep.csv) || fail "collected rows differ"
# A task names its points; a bad list is one line, exit 2.
set +e
"$TPUC" sweep sweep.json --out-dir out2 --points 2-9 > points_err.txt 2>&1
rc=$?
set -e
[ $rc = 2 ] && grep -qx "tpuc sweep: error: --points: point 9 is out of range (the sweep has 4 points)" points_err.txt \
  || fail "bad --points: $rc $(cat points_err.txt)"
# Bad engine options: one line each, exit 2 (sbatch / parallel looked up on tpuc's PATH).
expect_cli_error() { # message, then the arguments after sweep.json
  local want=$1 rc
  shift
  set +e
  PATH=${TPUC_PATH:-$PATH} "$TPUC" sweep sweep.json --out-dir out3 "$@" > cli_err.txt 2>&1
  rc=$?
  set -e
  [ $rc = 2 ] && [ "$(wc -l < cli_err.txt)" = 1 ] && grep -qxF "tpuc sweep: error: $want" cli_err.txt \
    || fail "$*: exit $rc, got $(cat cli_err.txt), want $want"
}
expect_cli_error "--engine: unknown engine 'pbs' (known: local, parallel, slurm)" --engine pbs
expect_cli_error "--wait needs --engine slurm" --engine parallel --wait
expect_cli_error "--partition needs --engine slurm" --partition cpu
expect_cli_error "--sshloginfile needs --engine parallel" --engine slurm --sshloginfile hosts
expect_cli_error "--jobs-file, --collect and --points exclude each other" --collect --points 1
expect_cli_error "--resume applies to a run, not to --collect or --points" --collect --resume
expect_cli_error "--chunk must be a whole number in [0, 1000000]" --chunk -1
expect_cli_error "--points: '1-' is not a list of point indices like 0-3,7" --points 1-
TPUC_PATH=/nonexistent expect_cli_error "--engine slurm: 'sbatch' is not on PATH (Debian package slurm-client)" --engine slurm
TPUC_PATH=/nonexistent expect_cli_error "--engine parallel: 'parallel' is not on PATH (Debian package parallel)" --engine parallel

# An ONNX model: compiled once per compile option (layer groups on/off), the
# builds cached by content hash, so a second sweep compiles nothing.
/usr/bin/python3 "$SRC/tests/explore/tiny_models.py" .
cat > onnx_sweep.json <<'JSON'
{"models": [{"name": "tiny", "onnx": "tiny.onnx"}],
 "hardware": {"ddrBandwidthGBs": [4, 32]},
 "compiler": {"quantize": "F32", "layer_group": [true, false]}}
JSON
"$TPUC" sweep onnx_sweep.json --out-dir onnx_out -j 2 > onnx_stdout.txt 2> onnx_progress.txt \
  || fail "onnx sweep: $(cat onnx_stdout.txt onnx_progress.txt)"
grep -q "compile  \[##############################\] 2/2" onnx_progress.txt || fail "no compile progress"
[ "$(ls -d onnx_out/cache/tiny_F32_lg_* onnx_out/cache/tiny_F32_nolg_* | wc -l)" = 2 ] || fail "expected 2 builds"
cut -d, -f1-5 onnx_out/sweep.csv | tail -4 | tr '\n' ' ' \
  | grep -q "^p0000,tiny,F32,on,4 p0001,tiny,F32,on,32 p0002,tiny,F32,off,4 p0003,tiny,F32,off,32 $" \
  || fail "onnx rows: $(cat onnx_out/sweep.csv)"
awk -F, 'NR>1 && !($12 > 0) {exit 1}' onnx_out/sweep.csv || fail "first sweep shows no compile time"
[ -s onnx_out/roofline_tiny_F32_lg.svg ] && grep -q "<circle" onnx_out/roofline_tiny_F32_lg.svg || fail "onnx roofline"
"$TPUC" sweep onnx_sweep.json --out-dir onnx_out -j 2 --quiet > /dev/null
awk -F, 'NR>1 && $12 != "0.000" {exit 1}' onnx_out/sweep.csv || fail "second sweep compiled again: $(cat onnx_out/sweep.csv)"

# A model that does not build: its points record the error in their rows,
# the other points run; after the fix --resume reruns only the failed ones.
echo "not an onnx model" > broken.onnx
cat > mixed.json <<'JSON'
{"models": [{"name": "tiny", "onnx": "tiny.onnx"}, {"name": "broken", "onnx": "broken.onnx"}],
 "hardware": {"ddrBandwidthGBs": [4, 32]}}
JSON
set +e
"$TPUC" sweep mixed.json --out-dir mixed -j 2 --quiet > mixed.txt 2>&1
rc=$?
set -e
[ $rc = 2 ] || fail "a failed build: exit $rc"
grep -q "^tpuc sweep: error: 2 of 4 points failed (first p0002: compiling broken (F32_lg) failed: .*(log: $W/mixed/cache/broken_F32_lg_.*/compile.log)); their rows hold the error, --resume reruns them$" mixed.txt \
  || fail "failed build message: $(cat mixed.txt)"
awk -F, 'NR>1 && NR<4 && !($6 > 0 && $16 == "") {exit 1} NR>3 && !($6 == "" && $16 ~ /^"?compiling broken/) {exit 1}' mixed/sweep.csv \
  || fail "error rows: $(cat mixed/sweep.csv)"
grep -q '"point":"p0003".*"error":"compiling broken' mixed/sweep.jsonl || fail "jsonl error row"
cp mixed/points/p0000.row.json kept_row.json
cp tiny.onnx broken.onnx
"$TPUC" sweep mixed.json --out-dir mixed -j 2 --quiet --resume > resumed.txt 2>&1 || fail "resume: $(cat resumed.txt)"
grep -qx "resume: 2 of 4 points to run (2-3)" resumed.txt || fail "resume note: $(cat resumed.txt)"
cmp kept_row.json mixed/points/p0000.row.json || fail "--resume reran a point that had a row"
awk -F, 'NR>1 && !($6 > 0 && $16 == "") {exit 1}' mixed/sweep.csv || fail "rows after resume: $(cat mixed/sweep.csv)"
"$TPUC" sweep mixed.json --out-dir mixed --quiet --resume | grep -qx "resume: 0 of 4 points to run" || fail "nothing to resume"

# Bad sweep files: one line naming the key or file, exit 2.
expect_error() { # file message
  set +e
  "$TPUC" sweep "$1" --out-dir bad > err.txt 2>&1
  local rc=$?
  set -e
  [ $rc = 2 ] || fail "$1: exit $rc"
  [ "$(wc -l < err.txt)" = 1 ] || fail "$1: not one line: $(cat err.txt)"
  grep -qF "$2" err.txt || fail "$1: got $(cat err.txt), want $2"
}
echo '{"models": [{"bmodel": "conv_add.bmodel"}], "hardware": {"ddrBandwithGBs": [4]}}' > unknown.json
expect_error unknown.json "tpuc sweep: error: unknown.json: hardware.ddrBandwithGBs: unknown HwConfig key 'ddrBandwithGBs'"
echo '{"models": [{"bmodel": "conv_add.bmodel"}], "hardware": {"npuLanes": [0]}}' > badvalue.json
expect_error badvalue.json "tpuc sweep: error: badvalue.json: hardware.npuLanes = 0.000000: "
echo '{"models": [{"bmodel": "gone.bmodel"}]}' > missing.json
expect_error missing.json "tpuc sweep: error: missing.json: models[0]: model file 'gone.bmodel' not found"
echo '{"models": [{"bmodel": "conv_add.bmodel"}], "grid": 1}' > topkey.json
expect_error topkey.json "tpuc sweep: error: topkey.json: unknown key 'grid'"
expect_error nofile.json "tpuc sweep: error: nofile.json: cannot open"
echo "sweep_cli: all checks passed"

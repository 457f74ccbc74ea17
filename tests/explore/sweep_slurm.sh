#!/usr/bin/env bash
# tpuc sweep --engine slurm on a single-node Slurm cluster this test starts
# (slurm_cluster.sh) and stops on exit: the 3-model x 4-bandwidth sweep as
# a 4-task job array (3 points per task), waited for and collected, gives
# the local pool's rows; a submitted array whose last task is cancelled
# (scancel) leaves the collect job with 3 missing rows, and --resume submits
# only those points. Exit 77 (skipped, with the reason) when Slurm cannot
# start here.
# Usage: sweep_slurm.sh <tpuc> <source dir> <work dir>
set -euo pipefail
TPUC=$1 SRC=$2 W=$3
rm -rf "$W" && mkdir -p "$W"
cd "$W"
source "$SRC/tests/explore/sweep_engines_lib.sh"
source "$SRC/tests/explore/slurm_cluster.sh"
# The daemons stop however the test ends (a signal becomes an exit).
trap slurm_stop EXIT
trap 'exit 143' TERM INT
rc=0
slurm_start "$W/cluster" || rc=$?
[ $rc = 0 ] || exit $rc
make_engine_sweep

# Bounded waits (3 x 80 s, under ctest's 300 s): a hung cluster fails the
# test instead of hanging it.
timeout 80 "$TPUC" sweep sweep.json --out-dir slurm --engine slurm --chunk 3 --wait > slurm.txt 2>&1 \
  || fail "slurm sweep: $(cat slurm.txt)"
grep -q "^Slurm array job [0-9]*: 4 tasks, logs $W/slurm/slurm/task_[0-9]*_<task>.log$" slurm.txt || fail "note: $(cat slurm.txt)"
grep -qx "#SBATCH --array=0-3" slurm/slurm/array.sh || fail "array: $(cat slurm/slurm/array.sh)"
grep -qx "3) points=9-11 ;;" slurm/slurm/array.sh || fail "chunks: $(cat slurm/slurm/array.sh)"
[ "$(ls slurm/slurm/task_*_[0-3].log | wc -l)" = 4 ] || fail "task logs: $(ls slurm/slurm)"
same_rows local slurm
compiled_once slurm slurm/slurm/task_*.log

# Submitted without --wait, one task at a time; the last task is cancelled
# while it waits, the collect job (afterany) reports its points missing.
"$TPUC" sweep sweep.json --out-dir slurm2 --engine slurm --chunk 3 --jobs 1 > submit.txt 2>&1 || fail "submit: $(cat submit.txt)"
array=$(sed -n 's/^Slurm array job \([0-9]*\):.*/\1/p' submit.txt)
collect=$(sed -n 's/^Slurm collect job \([0-9]*\) (after .*/\1/p' submit.txt)
[ -n "$array" ] && [ -n "$collect" ] || fail "submit output: $(cat submit.txt)"
grep -qx "#SBATCH --array=0-3%1" slurm2/slurm/array.sh || fail "throttle: $(grep array= slurm2/slurm/array.sh)"
scancel "${array}_3"
! squeue -h -r -j "$array" -o %K | grep -qx 3 || fail "task 3 still queued: $(squeue -r)"
for i in $(seq 160); do [ -z "$(squeue -h)" ] && break; sleep 0.5; done
[ -z "$(squeue -h)" ] || fail "jobs still queued after 80 s: $(squeue)"
[ ! -e "slurm2/slurm/task_${array}_3.log" ] && [ -e "slurm2/slurm/task_${array}_2.log" ] || fail "task logs: $(ls slurm2/slurm)"
grep -q "tpuc sweep: error: 3 of 12 points failed (first p0009: not run yet" "slurm2/slurm/collect_$collect.log" \
  || fail "collect job: $(cat "slurm2/slurm/collect_$collect.log")"
[ "$(grep -c ',not run yet' slurm2/sweep.csv)" = 3 ] || fail "missing rows: $(cat slurm2/sweep.csv)"

timeout 80 "$TPUC" sweep sweep.json --out-dir slurm2 --engine slurm --chunk 3 --resume --wait > resume.txt 2>&1 \
  || fail "resume: $(cat resume.txt)"
grep -qx "resume: 3 of 12 points to run (9-11)" resume.txt || fail "resume note: $(cat resume.txt)"
grep -qx "#SBATCH --array=0-0" slurm2/slurm/array.sh || fail "resume array: $(grep array= slurm2/slurm/array.sh)"
same_rows local slurm2
echo "sweep_slurm: all checks passed"

#!/usr/bin/env bash
# tpuc sweep --engine parallel: GNU Parallel runs the 3-model x 4-bandwidth
# sweep on this machine through its ssh-login path (-S :, and an
# --sshloginfile naming ":"), two tasks at once; the rows equal the local
# pool's; each ONNX build is compiled once although its tasks run together;
# --resume after two rows are lost runs only those two tasks (joblog).
# Exit 77 (skipped) when GNU Parallel is not installed.
# Usage: sweep_parallel.sh <tpuc> <source dir> <work dir>
set -euo pipefail
TPUC=$1 SRC=$2 W=$3
command -v parallel > /dev/null || { echo "SKIP: GNU Parallel is not installed (Debian package parallel)"; exit 77; }
rm -rf "$W" && mkdir -p "$W"
cd "$W"
source "$SRC/tests/explore/sweep_engines_lib.sh"
make_engine_sweep

"$TPUC" sweep sweep.json --out-dir par --engine parallel --sshlogin : -j 2 > par.txt 2>&1 || fail "parallel: $(cat par.txt)"
grep -q "^GNU Parallel ran 12 tasks (.*parallel --will-cite --joblog $W/par/parallel/joblog --jobs 2 --sshlogin : --arg-file $W/par/parallel/jobs.txt); joblog" par.txt \
  || fail "parallel note: $(cat par.txt)"
[ "$(wc -l < par/parallel/jobs.txt)" = 12 ] || fail "job list"
# joblog: a header and one line per task, every exit value (column 7) 0.
[ "$(awk 'NR>1 && $7 == 0' par/parallel/joblog | wc -l)" = 12 ] || fail "joblog: $(cat par/parallel/joblog)"
same_rows local par
compiled_once par par/tasks/*.log

# Two rows lost (a node died, a file was removed): --resume runs only their tasks.
rm par/points/p0005.row.json
echo '{"point": "p0010"}' > par/points/p0010.row.json
echo : > hosts.txt
"$TPUC" sweep sweep.json --out-dir par --engine parallel --sshloginfile hosts.txt --resume > resume.txt 2>&1 \
  || fail "resume: $(cat resume.txt)"
grep -qx "resume: 2 of 12 points to run (5,10)" resume.txt || fail "resume note: $(cat resume.txt)"
grep -q -- "--sshloginfile $W/hosts.txt\|--sshloginfile hosts.txt" resume.txt || fail "no --sshloginfile: $(cat resume.txt)"
[ "$(awk 'NR>1' par/parallel/joblog | wc -l)" = 2 ] || fail "resume ran: $(cat par/parallel/joblog)"
grep -q -- "--points 5 " par/parallel/jobs.txt && grep -q -- "--points 10 " par/parallel/jobs.txt || fail "resume jobs"
same_rows local par

# An engine option for the other engine is refused.
set +e
"$TPUC" sweep sweep.json --out-dir x --sshlogin : > err.txt 2>&1
rc=$?
set -e
[ $rc = 2 ] && grep -qx "tpuc sweep: error: --sshlogin needs --engine parallel" err.txt || fail "option check: $rc $(cat err.txt)"
echo "sweep_parallel: all checks passed"

#!/usr/bin/env bash
# check-docs must fail on a stale table: a throw-away clone of this repository where (1) a table's stamp
# is aged (its commit is older than a commit changing the code it measures) and (2) a committed figure
# is edited so that the quick re-run no longer reproduces it. Each alone must fail its check.
#   stale_figure_test.sh <repo root> <build dir> <work dir>
set -euo pipefail
root=$1 build=$2 work=$3
rm -rf "$work" && git clone -q --no-hardlinks "$root" "$work/repo"
cd "$work/repo"
ln -s "$root/models/out" models/out   # the exported models (not in git)
git -c user.name=t -c user.email=t@t commit -q --allow-empty -m base
head=$(git rev-parse HEAD)
doc=docs/validation.md
# (1) Stamp the latency set at HEAD, then commit a change to code it measures: stale.
python3 - "$doc" "$head" <<'PY'
import sys
path, commit = sys.argv[1:]
text = open(path).read()
end = "<!-- latency-set end -->"
text = text.replace(end, f"Provenance (latency-set): commit {commit}, 2026-01-01 00:00 UTC, `test`\n{end}")
open(path, "w").write(text)
PY
git -c user.name=t -c user.email=t@t commit -qam "stamp the latency set"
/usr/bin/python3 perf/provenance.py stale --root . > "$work/fresh.txt" || true
if grep "^docs/validation.md: latency-set" "$work/fresh.txt"; then
  echo "FAIL: a stamp at HEAD is reported stale"; exit 1
fi
# A commit that declares in its trailer that it changes no figure does not age the stamp ...
echo "// a comment" >> timing/GdmaTiming.cpp
git -c user.name=t -c user.email=t@t commit -qam "a comment" -m "Figures-unchanged: a comment only"
/usr/bin/python3 perf/provenance.py stale --root . > "$work/declared.txt" || true
if grep "^docs/validation.md: latency-set" "$work/declared.txt"; then
  echo "FAIL: a commit declaring Figures-unchanged aged the stamp"; exit 1
fi
echo "PASS: a Figures-unchanged commit keeps the stamp current"
# ... one that names the table in a Figures-changed trailer, or has no evidence, does.
echo "// a timing change" >> timing/GdmaTiming.cpp
git -c user.name=t -c user.email=t@t commit -qam "change the timing model" -m "Figures-unchanged: not of the latency set
Figures-changed: zoo, latency-set"
/usr/bin/python3 perf/provenance.py stale --root . > "$work/named.txt" && { echo "FAIL: stale passed"; exit 1; }
grep -q "^docs/validation.md: latency-set: made at ${head:0:12}" "$work/named.txt" \
  || { echo "FAIL: a Figures-changed commit naming the table did not age it"; cat "$work/named.txt"; exit 1; }
echo "PASS: Figures-changed naming the table ages its stamp"
git -c user.name=t -c user.email=t@t commit -q --allow-empty -m "back to a stamp of HEAD"
python3 - "$doc" "$(git rev-parse HEAD)" <<'PY'
import re, sys
path, commit = sys.argv[1:]
text = open(path).read()
text = re.sub(r"Provenance \(latency-set\): commit [0-9a-f]{40}", f"Provenance (latency-set): commit {commit}", text)
open(path, "w").write(text)
PY
git -c user.name=t -c user.email=t@t commit -qam "restamp the latency set"
head=$(git rev-parse HEAD~1)
echo "// another timing change" >> timing/GdmaTiming.cpp
git -c user.name=t -c user.email=t@t commit -qam "change the timing model again" -m "Figures-unchanged:"
/usr/bin/python3 perf/provenance.py stale --root . > "$work/aged.txt" && { echo "FAIL: stale passed"; exit 1; }
grep "^docs/validation.md: latency-set: made at ${head:0:12}.*change the code it measures" "$work/aged.txt" \
  || { echo "FAIL: the aged stamp is not reported"; cat "$work/aged.txt"; exit 1; }
echo "PASS: an aged stamp fails the stale check"
# A later commit can vouch for one whose message lacks the trailer (a stamped message cannot be amended).
git -c user.name=t -c user.email=t@t commit -q --allow-empty -m "vouch" \
  -m "Figures-unchanged-in: $(git rev-parse --short=12 HEAD) a comment only"
/usr/bin/python3 perf/provenance.py stale --root . > "$work/vouched.txt" || true
if grep "^docs/validation.md: latency-set" "$work/vouched.txt"; then
  echo "FAIL: a vouched-for commit aged the stamp"; exit 1
fi
echo "PASS: Figures-unchanged-in keeps the stamp current"
# (2) An edited figure of the quick set: the re-run must not reproduce it.
sed -i 's/^| retinaface_mnet025 | FP32 b1 | \([0-9.]*\) |/| retinaface_mnet025 | FP32 b1 | 9.999 |/' "$doc"
grep -q "| retinaface_mnet025 | FP32 b1 | 9.999 |" "$doc" || { echo "FAIL: could not edit the figure"; exit 1; }
if /usr/bin/python3 perf/validate_latency.py --check --tpuc "$build/tools/tpuc/tpuc" \
     --fit-timing "$build/perf/fit_timing" --work "$work/latency" > "$work/check.txt" 2>&1; then
  echo "FAIL: an edited figure passed --check"; exit 1
fi
grep "latency-set: row retinaface_mnet025 FP32 b1, column 'simulated ms': committed 9.999" "$work/check.txt" \
  || { echo "FAIL: the edited cell is not reported"; tail "$work/check.txt"; exit 1; }
echo "PASS: an edited figure fails the quick re-run"

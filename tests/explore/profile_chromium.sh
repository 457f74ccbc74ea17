#!/usr/bin/env bash
# tpuc profile's HTML rendered by headless Chromium: no console errors, the
# script ran, the layer table and the TIU/GDMA timeline are in the DOM. A page
# with a deliberate script error proves the console check sees errors.
# Exit 77 (skipped) only when chromium is not installed.
# Usage: profile_chromium.sh <tpuc> <source dir> <work dir>
set -euo pipefail
TPUC=$1 SRC=$2 W=$3
source "$SRC/tests/lib/chromium.sh"
chromium_page_test "$W"

"$TPUC" asm "$SRC/tests/data/asm/conv_add.s" -o m.bmodel
/usr/bin/python3 -c "
import numpy as np
rng = np.random.default_rng(7)
np.savez('in.npz', x=rng.standard_normal((1, 8, 10, 10)).astype(np.float32),
         y=rng.standard_normal((1, 16, 8, 8)).astype(np.float32))"
"$TPUC" sim m.bmodel --input in.npz -o out.npz --stats stats.json --trace trace.json > /dev/null
"$TPUC" profile stats.json --trace trace.json -o report.html
grep -qE "https?://[^w]|<link|src=" report.html && fail "report references outside resources"
render() { chromium_render "file://$W/$1"; }

render report.html
[ ! -s console.txt ] || fail "console errors: $(cat console.txt)"
grep -q '<body data-ready="1">' dom.html || fail "the report's script did not run to the end"
grep -q '<table id="layers" class="sortable">' dom.html || fail "no layer table"
grep -q '<td>conv1</td>' dom.html && grep -q '<td>add1</td>' dom.html || fail "layer rows missing"
grep -q '<svg id="timeline"' dom.html || fail "no timeline"
grep -q 'data-lane="TIU"' dom.html && grep -q 'data-lane="GDMA"' dom.html || fail "no TIU/GDMA rows"
grep -q '<svg id="utilization"' dom.html || fail "no utilization chart"

# Bad input: one line, exit 2.
set +e
"$TPUC" profile missing.json -o r.html > err.txt 2>&1; rc=$?
set -e
[ $rc = 2 ] && [ "$(wc -l < err.txt)" = 1 ] && grep -q "tpuc profile: error: missing.json: cannot open" err.txt \
  || fail "missing stats: exit $rc, $(cat err.txt)"
echo '{"clock_mhz": 550}' > bad.json
set +e
"$TPUC" profile bad.json -o r.html > err.txt 2>&1; rc=$?
set -e
[ $rc = 2 ] && grep -q "tpuc profile: error: bad.json: missing key 'total_cycles'" err.txt || fail "bad stats: $(cat err.txt)"
[ ! -e r.html ] || fail "a failed run left r.html"
echo "profile_chromium: all checks passed"

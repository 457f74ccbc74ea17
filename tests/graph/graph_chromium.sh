#!/usr/bin/env bash
# The page of tpuc graph (the one tpuc flow writes) in headless Chromium:
# no console errors, one drawn node per op of the Tpu module, a node's panel
# after a click (the page's test hook: #select=NAME), the first layer below
# tolerance one click away (#first-below), a screenshot with drawn pixels.
# Exit 77 (skipped) only when chromium is not installed.
# Usage: graph_chromium.sh <tpuc> <source dir> <work dir>
set -euo pipefail
TPUC=$1 SRC=$2 W=$3
source "$SRC/tests/lib/chromium.sh"
chromium_page_test "$W"

/usr/bin/python3 "$SRC/tests/lit/flow/Inputs/make_onnx.py" .
"$TPUC" flow flownet.onnx --quantize INT8 --calibration-data samples --calibration-method max \
  --test-input in.npz --work-dir flow > /dev/null 2>&1
PAGE=flow/graph.html
[ -s $PAGE ] || fail "tpuc flow wrote no graph.html"
grep -qE "https?://[^w]|<link|src=" $PAGE && fail "the page references outside resources"

# One node per op that computes a tensor (the function inputs included),
# counted from the module text, not by the graph code.
OPS=$(grep -cE '= "tpu\.[a-z_]+"|= top\.input ' flow/flownet_int8.tpu.mlir)
chromium_render "file://$W/$PAGE#select=relu1"
[ ! -s console.txt ] || fail "console errors: $(cat console.txt)"
grep -q 'data-ready="1"' dom.html || fail "the page's script did not run to the end"
DRAWN=$(grep -o 'data-nodes="[0-9]*"' dom.html | grep -o '[0-9]*')
[ "$DRAWN" = "$OPS" ] || fail "drawn nodes $DRAWN, the Tpu module has $OPS ops"
[ "$(grep -o '<g id="n[0-9]*" class="node' dom.html | wc -l)" = "$OPS" ] || fail "SVG node count differs"
grep -q '<h2 id="panel-name">relu1</h2>' dom.html || fail "no panel for the selected node"
for field in 'tpu.conv' 'calibration threshold' 'cosine top vs tpu' 'cycles' 'TIU / GDMA commands' 'rshift'; do
  grep -q "<th>$field</th>\|<td>$field</td>" dom.html || fail "the panel lacks '$field'"
done
grep -q 'class="cluster"' dom.html || fail "no layer-group cluster"

# A strict tolerance flags a layer: the page's first-below names the same
# layer as the command line, and flow.json has its cosine under the line.
OUT=$("$TPUC" graph flow/flownet_int8.tpu.mlir --flow-dir flow --tolerance 0.99995 -o strict.html)
FIRST=$(echo "$OUT" | sed -n 's/^graph: first layer below cosine [0-9.e-]*: //p')
[ -n "$FIRST" ] || fail "no layer below 0.99995: $OUT"
/usr/bin/python3 -c "
import json, sys
m = json.load(open('flow/flow.json'))
cos = [t['cosine'] for c in m['comparisons'] for t in c['tensors'] if t['name'] == sys.argv[1]]
sys.exit(0 if cos and min(cos) < 0.99995 else 1)" "$FIRST" || fail "flow.json does not put $FIRST below 0.99995"
chromium_render "file://$W/strict.html#first-below"
[ ! -s console.txt ] || fail "console errors: $(cat console.txt)"
grep -q "<h2 id=\"panel-name\">$FIRST</h2>" dom.html || fail "first-below did not open $FIRST"

# Colored by time on request: the slowest layer gets the dark end of the scale.
chromium_render "file://$W/$PAGE#color=time"
[ ! -s console.txt ] || fail "console errors: $(cat console.txt)"
grep -q 'fill="#d94801"' dom.html || fail "no node colored as the slowest layer"

chromium_screenshot "file://$W/$PAGE#select=relu1" shot.png || fail "no screenshot"
FRACTION=$(png_drawn_fraction shot.png)
/usr/bin/python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) > 0.05 else 1)" "$FRACTION" \
  || fail "the screenshot is nearly empty ($FRACTION of the pixels drawn)"
echo "graph_chromium: all checks passed ($DRAWN nodes, first below 0.99995: $FIRST, $FRACTION drawn)"

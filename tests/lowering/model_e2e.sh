#!/bin/sh
# One exported model (models/out) end to end through tpuc, F32 and INT8:
# import, Top interpreter reference, F32 bmodel (equal to the Tpu interpreter
# bit for bit, cosine >= 0.9999 to the reference), calibration (8 samples of
# models/out/cali/<cali-model>, imported from <cali-model>.onnx: a batch-4
# export shares the batch-1 model's tensor names; --int8-recipe none: the
# reference compiler's per-tensor scheme, which the cosine floors were set
# for on these untrained exports), INT8 bmodel (equal to the
# Tpu interpreter bit for bit, cosine >= <int8-min-cosine>), and both bmodels
# run with `tpuc run` on the func and the sim backend: the outputs must be
# the same bytes. Prints the cosines. Exit 77 (skipped) when the exported
# model is absent.
# usage: model_e2e.sh tpuc src-dir work-dir model input-shapes cali-model method int8-min-cosine
set -e
tpuc="$1" src="$2" out="$3" model="$4" shapes="$5" cali="$6" method="$7" mincos="$8"
models="$src/models/out"
if [ ! -f "$models/$model.onnx" ] || [ ! -f "$models/$cali.onnx" ] || [ ! -d "$models/cali/$cali" ]; then
  echo "models/out/$model.onnx, $cali.onnx or cali/$cali are missing (scripts/install-deps.sh exports them)"
  exit 77
fi
rm -rf "$out" && mkdir -p "$out" && cd "$out"
input="$models/${model}_in.npz"
"$tpuc" import "$models/$model.onnx" --input-shapes "$shapes" -o m.top.mlir
"$tpuc" run m.top.mlir --input "$input" -o ref.npz
"$tpuc" deploy m.top.mlir --quantize F32 -o m_f32.bmodel --test-input "$input" --test-reference ref.npz 2> f32.log
grep -q "bmodel outputs equal the Tpu interpreter's bit for bit" f32.log
if [ "$cali" = "$model" ]; then cp m.top.mlir cali.top.mlir; else "$tpuc" import "$models/$cali.onnx" -o cali.top.mlir; fi
"$tpuc" calibrate cali.top.mlir --dataset "$models/cali/$cali" --input-num 8 --method "$method" --int8-recipe none -o m.cali 2> /dev/null
"$tpuc" deploy m.top.mlir --quantize INT8 --calibration-table m.cali -o m_int8.bmodel --test-input "$input" 2> int8.log
grep -q "bmodel outputs equal the Tpu interpreter's bit for bit" int8.log
for q in f32 int8; do
  "$tpuc" run m_$q.bmodel --input "$input" -o func_$q.npz --backend func > func_$q.log
  "$tpuc" run m_$q.bmodel --input "$input" -o sim_$q.npz --backend sim > sim_$q.log
  cmp func_$q.npz sim_$q.npz
  echo "$model $q: func and sim outputs are the same bytes ($(grep -o 'wall time .*' func_$q.log) func, $(grep -o 'wall time .*' sim_$q.log) sim)"
done
echo "$model F32 vs Top interpreter:" && grep -A1 "^tensor" f32.log | tail -n 1
echo "$model INT8 ($method, 8 samples) vs Top interpreter:"
# Only the cosine is held to a floor (-1: no euclidean bound).
status=0
"$tpuc" compare ref.npz func_int8.npz --tolerance "$mincos,-1" > int8_compare.txt || status=$?
grep -v "^tensor" int8_compare.txt
exit $status

#!/bin/sh
# End-to-end acceptance on ResNet-18 (models/out, exported by install-deps):
# import, Top interpreter reference, F32 bmodel (cosine >= 0.9999 and equal to
# the Tpu interpreter), KL calibration on 8 samples, INT8 bmodel with layer
# groups (bit-exact with the Tpu interpreter; cosine >= 0.99 with the first
# conv kept in F32 through the quantize table). Exit 77 (skipped) only when
# the exported model is absent.
set -e
tpuc="$1"
src="$2"
out="$3"
models="$src/models/out"
if [ ! -f "$models/resnet18.onnx" ] || [ ! -d "$models/cali/resnet18" ]; then
  echo "models/out/resnet18.onnx or its calibration samples are missing (scripts/install-deps.sh exports them)"
  exit 77
fi
rm -rf "$out" && mkdir -p "$out" && cd "$out"
"$tpuc" import "$models/resnet18.onnx" -o r18.top.mlir
"$tpuc" run r18.top.mlir --input "$models/resnet18_in.npz" -o ref.npz
"$tpuc" deploy r18.top.mlir --quantize F32 --no-layer-group -o r18_f32.bmodel \
  --test-input "$models/resnet18_in.npz" --test-reference ref.npz 2> f32.log
grep -q "bmodel outputs equal the Tpu interpreter's bit for bit" f32.log
"$tpuc" calibrate r18.top.mlir --dataset "$models/cali/resnet18" --input-num 8 --method kl --int8-recipe none -o r18.cali 2> /dev/null
echo "/relu/Relu_output_0 F32" > keep_f32.txt
"$tpuc" deploy r18.top.mlir --quantize INT8 --calibration-table r18.cali --quantize-table keep_f32.txt \
  -o r18_int8.bmodel --test-input "$models/resnet18_in.npz" --test-reference ref.npz 2> int8.log
grep -q "bmodel outputs equal the Tpu interpreter's bit for bit" int8.log
grep "^output\|layer groups:" f32.log int8.log

#!/usr/bin/env bash
# Builds every bmodel of the suite's end-to-end models (tests/lowering: the
# e2e models in F32 and INT8, the PP-OCR detector) and prints one
# "sha256  name" line per bmodel, sorted. A refactor of
# the compiler must leave this list unchanged: run it before and after and
# diff the two lists.
#   bash scripts/bmodel-sums.sh [BUILD_DIR] [WORK_DIR] > sums.txt
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
work=${2:-$(mktemp -d)}
tpuc="$build/tools/tpuc/tpuc"
models="$root/models/out"
[[ -x $tpuc ]] || { echo "bmodel-sums: error: $tpuc is not built" >&2; exit 2; }
[[ -d $models ]] || { echo "bmodel-sums: error: $models is missing (scripts/models.sh)" >&2; exit 2; }
mkdir -p "$work"

# model | input shapes | calibration model | method: the specs of tests/lowering/CMakeLists.txt.
specs=("ppocr_det|[[1,3,640,640]]|ppocr_det|max"
       "resnet18|[[1,3,224,224]]|resnet18|kl"
       "resnet18_b4|[[4,3,224,224]]|resnet18|kl"
       "resnet50|[[1,3,224,224]]|resnet50|kl"
       "resnet50_b4|[[4,3,224,224]]|resnet50|kl"
       "mobilenet_v2|[[1,3,224,224]]|mobilenet_v2|kl"
       "mobilenet_v2_b4|[[4,3,224,224]]|mobilenet_v2|kl")
for spec in "${specs[@]}"; do
  IFS='|' read -r model shapes cali method <<< "$spec"
  d="$work/$model"
  mkdir -p "$d"
  "$tpuc" import "$models/$model.onnx" --input-shapes "$shapes" -o "$d/m.top.mlir" 2> "$d/import.log"
  # As tests/lowering/model_e2e.sh: a batch-4 model calibrates on its batch-1 export.
  if [[ $cali == "$model" ]]; then cp "$d/m.top.mlir" "$d/cali.top.mlir"
  else "$tpuc" import "$models/$cali.onnx" -o "$d/cali.top.mlir" 2>> "$d/import.log"; fi
  "$tpuc" calibrate "$d/cali.top.mlir" --dataset "$models/cali/$cali" --input-num 8 --method "$method" \
    -o "$d/m.cali" 2> "$d/calibrate.log"
  "$tpuc" deploy "$d/m.top.mlir" --quantize F32 -o "$d/${model}_f32.bmodel" 2> "$d/f32.log"
  "$tpuc" deploy "$d/m.top.mlir" --quantize INT8 --calibration-table "$d/m.cali" \
    -o "$d/${model}_int8.bmodel" 2> "$d/int8.log"
done
cd "$work"
sha256sum */*.bmodel | sort -k2

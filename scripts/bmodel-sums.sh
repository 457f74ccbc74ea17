#!/usr/bin/env bash
# Builds every bmodel of the suite and prints one "sha256  name" line per
# bmodel, sorted: the e2e models of tests/lowering in F32 and INT8 (the
# PP-OCR detector among them), the CI zoo models (models/out/zoo) in F32 and
# INT8, the MediaPipe TFLite models in F32 and INT8, and BlazeFace and
# PP-OCR with every INT8 lever on (per-channel weights, int16 pointwise, bias
# correction, rounding). Every calibration uses --int8-recipe none (the
# levers named, no search: the search's choice depends on the machine's
# speed through its time budget). A refactor of the compiler must leave this list
# unchanged: run it before and after and diff the two lists.
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

# deploy_pair DIR NAME TOP CALI [deploy flags of the INT8 bmodel...]: the F32 and the INT8 bmodel.
deploy_pair() {
  local d=$1 name=$2 top=$3 cali=$4
  shift 4
  "$tpuc" deploy "$top" --quantize F32 -o "$d/${name}_f32.bmodel" 2> "$d/f32.log"
  "$tpuc" deploy "$top" --quantize INT8 --calibration-table "$cali" "$@" -o "$d/${name}_int8.bmodel" 2> "$d/int8.log"
}

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
  "$tpuc" calibrate "$d/cali.top.mlir" --dataset "$models/cali/$cali" --input-num 8 --method "$method" --int8-recipe none \
    -o "$d/m.cali" 2> "$d/calibrate.log"
  deploy_pair "$d" "$model" "$d/m.top.mlir" "$d/m.cali"
done

# sample_inputs TOP DIR: 8 seeded uniform [-1, 1] samples of the module's one input (the
# MediaPipe models ship no calibration set; any fixed data pins the bmodel's bytes).
sample_inputs() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import os, re, sys
import numpy as np
text = open(sys.argv[1]).read()
name = re.search(r'top.input_names = \["([^"]+)"\]', text).group(1)
shape = [int(v) for v in re.search(r'func.func @\w+\(%arg0: tensor<([0-9x]+)xf32>', text).group(1).split("x")]
os.makedirs(sys.argv[2], exist_ok=True)
for i in range(8):
    x = np.random.default_rng(i).uniform(-1, 1, shape).astype(np.float32)
    np.savez(os.path.join(sys.argv[2], f"sample_{i:02d}.npz"), **{name: x})
PY
}

# The CI zoo (ONNX) and the MediaPipe models (TFLite), default calibration on 8 samples.
zoo_models=()
for f in "$models"/zoo/*.onnx; do zoo_models+=("zoo/$(basename "$f" .onnx)"); done
for f in "$models"/mediapipe/*.tflite; do zoo_models+=("mediapipe/$(basename "$f" .tflite)"); done
for entry in "${zoo_models[@]}"; do
  name=${entry#*/}
  d="$work/$name"
  mkdir -p "$d"
  if [[ $entry == zoo/* ]]; then
    "$tpuc" import "$models/$entry.onnx" -o "$d/m.top.mlir" 2> "$d/import.log"
    dataset="$models/zoo/cali/$name"
  else
    "$tpuc" import "$models/$entry.tflite" -o "$d/m.top.mlir" 2> "$d/import.log"
    dataset="$d/cali"
    sample_inputs "$d/m.top.mlir" "$dataset"
  fi
  "$tpuc" calibrate "$d/m.top.mlir" --dataset "$dataset" --input-num 8 --int8-recipe none -o "$d/m.cali" 2> "$d/calibrate.log"
  deploy_pair "$d" "$name" "$d/m.top.mlir" "$d/m.cali"
done

# Every INT8 lever at once, on a depthwise model of each importer path.
for name in blazeface ppocr_det; do
  src="$work/$name"
  [[ -f $src/m.cali ]] || continue
  d="$work/${name}_levers"
  mkdir -p "$d"
  dataset="$models/zoo/cali/$name"
  [[ -d $dataset ]] || dataset="$models/cali/$name"
  "$tpuc" deploy "$src/m.top.mlir" --quantize INT8 --calibration-table "$src/m.cali" --per-channel-weights \
    --int16-pointwise --bias-correction --round-weights --calibration-data "$dataset" \
    -o "$d/${name}_levers_int8.bmodel" 2> "$d/int8.log"
done
cd "$work"
sha256sum */*.bmodel | sort -k2

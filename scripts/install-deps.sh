#!/usr/bin/env bash
# Installs every build and test dependency from Debian's packages (and npm for the
# numeric reference). Idempotent: a second run installs nothing new.
set -euo pipefail

PKGS=(cmake ninja-build g++ pkgconf ccache
      llvm-19-dev llvm-19-tools libmlir-19-dev mlir-19-tools
      libsystemc-dev libprotobuf-dev protobuf-compiler libonnx-dev libonnx-testdata
      libflatbuffers-dev flatbuffers-compiler libgtest-dev libgmock-dev libbenchmark-dev
      libzip-dev libssl-dev zlib1g-dev nlohmann-json3-dev
      pybind11-dev python3-dev chromium libgraphviz-dev
      clang libclang-rt-14-dev clang-format-14
      slurm-wlm munge parallel
      libarmnn-dev libarmnntfliteparser-dev libarmnn-cpuref-backend22
      libstb-dev python3-pil fonts-dejavu-core)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "install-deps: all Debian packages present" >&2
fi

# Real models and the onnxruntime reference (docs/models.md): Debian's torch stack for
# the export scripts, node/npm for tools/ort. A node that is already there (from any
# source) is kept: Debian's npm conflicts with other node packages.
PY_PKGS=(python3-numpy python3-onnx python3-torch python3-torchvision)
missing=()
for p in "${PY_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
command -v node >/dev/null && command -v npm >/dev/null || missing+=(nodejs npm)
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
bash "$(dirname "${BASH_SOURCE[0]}")/models.sh"

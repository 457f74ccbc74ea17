#!/usr/bin/env bash
# The test command: installs what is missing, builds everything, runs every test.
#   bash scripts/test.sh            (BUILD_DIR defaults to ./build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
bash "$root/scripts/install-deps.sh"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$build"
cd "$build"
# Tests labelled heavy (the whole model zoo) are opt-in: `ctest -L heavy` in the build folder. A test that
# skips (its tool or data is missing) fails the run unless it is labelled optional (ctest-strict.sh).
bash "$root/scripts/ctest-strict.sh" --output-on-failure -j"$(nproc)" -LE heavy "$@"
# Then the unit tests again under AddressSanitizer + UBSan in their own build
# folder (scripts/sanitize.sh, docs/reliability.md). TPU_SANITIZE_IN_TESTS=0 skips it.
if [[ ${TPU_SANITIZE_IN_TESTS:-1} != 0 ]]; then
  bash "$root/scripts/sanitize.sh"
fi

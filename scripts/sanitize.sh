#!/usr/bin/env bash
# Sanitizer run (docs/reliability.md): configures a separate build folder with
# -DTPU_SANITIZE=ON (AddressSanitizer + UndefinedBehaviorSanitizer), builds only
# the plain-C++ unit tests (support, isa, simulator, runtime, reliability; the
# runtime tests include conv_add end to end on func and sim; and the C API's
# asynchronous-launch and concurrency tests, which run worker threads) and runs them with
# ctest, folder by folder. Any sanitizer report fails the test that triggered it.
#   bash scripts/sanitize.sh            (SANITIZE_BUILD_DIR defaults to ./build-sanitize)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SANITIZE_BUILD_DIR:-$root/build-sanitize}
jobs=${SANITIZE_JOBS:-$(nproc)}
start=$SECONDS

# -O1: the sanitized tests run at a useful speed, the build stays short.
cmake -S "$root" -B "$build" -G Ninja -DTPU_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1" >/dev/null

# One gtest executable per *Test.cpp of these parts (tests/<part>/CMakeLists.txt).
mapfile -t targets < <(ninja -C "$build" -t targets all |
  sed -nE 's/^((support|isa|sim|runtime|reliability)_[A-Za-z0-9]+Test|capi_(Async|Concurrency)Test): phony$/\1/p' |
  sort -u)
if ((${#targets[@]} == 0)); then
  echo "sanitize: no unit-test targets found in $build" >&2
  exit 1
fi
echo "sanitize: building ${#targets[@]} test executables" >&2
ninja -C "$build" -j"$jobs" "${targets[@]}"
echo "sanitize: build took $((SECONDS - start)) s" >&2

# Every report is an error; leaks count too. (No detect_stack_use_after_return:
# its fake stacks break SystemC's coroutine stack switching.)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# ctest per test folder: exactly the tests of these parts (other parts' targets
# are not built here and would show up as *_NOT_BUILT).
status=0
for part in support isa simulator runtime reliability capi; do
  [[ -d $build/tests/$part ]] || continue
  ctest --test-dir "$build/tests/$part" --output-on-failure -j"$jobs" -E '_NOT_BUILT$' --timeout 900 || status=1
done
echo "sanitize: done in $((SECONDS - start)) s" >&2
exit $status

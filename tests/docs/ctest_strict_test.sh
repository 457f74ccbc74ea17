#!/usr/bin/env bash
# scripts/ctest-strict.sh on a throw-away ctest project: a skip fails the run unless the test is labelled
# optional, and every skip is in the summary.
#   ctest_strict_test.sh <repo root> <work dir>
set -euo pipefail
root=$1 work=$2
rm -rf "$work" && mkdir -p "$work/src"
cat > "$work/src/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.16)
project(skips NONE)
enable_testing()
add_test(NAME passes COMMAND true)
add_test(NAME skips_optional COMMAND sh -c "exit 77")
add_test(NAME skips_required COMMAND sh -c "exit 77")
set_tests_properties(skips_optional skips_required PROPERTIES SKIP_RETURN_CODE 77)
set_tests_properties(skips_optional PROPERTIES LABELS optional)
CMAKE
cmake -S "$work/src" -B "$work/build" > /dev/null
cd "$work/build"
run() { bash "$root/scripts/ctest-strict.sh" "$@" > "$work/out.txt" 2>&1; }
if run; then echo "FAIL: a required test skipped and the run passed"; exit 1; fi
grep -q "FAIL skipped: skips_required" "$work/out.txt" || { echo "FAIL: no summary line"; cat "$work/out.txt"; exit 1; }
grep -q "skipped (optional): skips_optional" "$work/out.txt" || { echo "FAIL: optional skip not listed"; exit 1; }
run -E skips_required || { echo "FAIL: only an optional skip, and the run failed"; cat "$work/out.txt"; exit 1; }
echo "PASS: a required skip fails, an optional one is listed and passes"

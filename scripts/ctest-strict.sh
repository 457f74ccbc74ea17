#!/usr/bin/env bash
# ctest for CI: a skipped test (SKIP_RETURN_CODE, "could not run here") fails the run unless the test is
# labelled optional; every skip is printed in a summary after ctest's own.
#   cd build && bash ../scripts/ctest-strict.sh [ctest arguments]
set -uo pipefail
log=$(mktemp)
trap 'rm -f "$log"' EXIT
ctest "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
# ctest lists them as "<n> - <name> (Skipped)" under "The following tests did not run:".
mapfile -t skipped < <(sed -n 's/^[[:space:]]*[0-9]* - \(.*\) (Skipped)$/\1/p' "$log")
mapfile -t optional < <(ctest -N -L optional | sed -n 's/^[[:space:]]*Test[[:space:]]*#[0-9]*: //p')
required=()
for name in "${skipped[@]}"; do
  [[ " ${optional[*]} " == *" $name "* ]] || required+=("$name")
done
echo "skip summary: ${#skipped[@]} skipped, ${#required[@]} of them not labelled optional"
for name in "${skipped[@]}"; do
  [[ " ${required[*]} " == *" $name "* ]] && echo "  FAIL skipped: $name" || echo "  skipped (optional): $name"
done
((${#required[@]})) && rc=1
exit "$rc"

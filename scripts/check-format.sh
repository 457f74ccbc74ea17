#!/usr/bin/env bash
# Checks the house style (.clang-format) on every C++ line changed since BASE:
# by default the commit that adopted .clang-format, so old code is reformatted
# only when it is touched. Prints the diff clang-format wants and exits 1 when
# any changed line differs from it; exits 2 on a usage error.
#   bash scripts/check-format.sh [BASE]       (uncommitted edits of tracked files count too)
set -euo pipefail
cd "$(git -C "$(dirname "$0")" rev-parse --show-toplevel)"
fmt_diff=$(command -v clang-format-diff-14 || command -v clang-format-diff || true)
[[ -n $fmt_diff ]] || { echo "check-format: error: clang-format-diff is not installed (clang-format-14)" >&2; exit 2; }
[[ -f .clang-format ]] || { echo "check-format: error: no .clang-format in $(pwd)" >&2; exit 2; }
base=${1:-$(git log --diff-filter=A --format=%H -- .clang-format | tail -n 1)}
[[ -n $base ]] || { echo "check-format: error: .clang-format is not committed; name a BASE commit" >&2; exit 2; }
git rev-parse --quiet --verify "$base^{commit}" >/dev/null ||
  { echo "check-format: error: '$base' is not a commit of this repository" >&2; exit 2; }
changes=$(git diff -U0 --no-color "$base" -- '*.cpp' '*.h' | "$fmt_diff" -p1 -style=file || true)
if [[ -n $changes ]]; then
  printf '%s\n' "$changes"
  echo "check-format: lines changed since ${base:0:12} differ from .clang-format (apply the diff above," \
       "or run: git diff -U0 $base | $(basename "$fmt_diff") -p1 -i)" >&2
  exit 1
fi
echo "check-format: every C++ line changed since ${base:0:12} follows .clang-format"

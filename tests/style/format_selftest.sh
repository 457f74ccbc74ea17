#!/usr/bin/env bash
# scripts/check-format.sh must pass on well-formatted changes and fail on a
# misformatted one: a throwaway repository with this tree's .clang-format.
set -euo pipefail
root=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/scripts"
cp "$root/.clang-format" "$tmp/"
cp "$root/scripts/check-format.sh" "$tmp/scripts/"
cd "$tmp"
git init -q
git -c user.name=t -c user.email=t@t commit -qm style --allow-empty
git add .clang-format scripts && git -c user.name=t -c user.email=t@t commit -qm style
printf 'int f(int a) { return a + 1; }\n' > good.cpp && git add good.cpp
bash scripts/check-format.sh >/dev/null || { echo "FAIL: a well-formatted file was refused"; exit 1; }
printf 'int   g( int a ){return a+1 ;}\n' > bad.cpp
git add bad.cpp
if bash scripts/check-format.sh >/dev/null 2>&1; then echo "FAIL: a misformatted line passed"; exit 1; fi
set +e; bash scripts/check-format.sh not-a-commit >/dev/null 2>&1; rc=$?; set -e
[[ $rc == 2 ]] || { echo "FAIL: a bad BASE gave exit $rc, not 2"; exit 1; }
echo "format self-test: ok"

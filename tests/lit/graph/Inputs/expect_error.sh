#!/usr/bin/env bash
# Runs a command that must fail on bad input: exit status 2 and exactly one
# line of output (stdout and stderr together), which is printed for FileCheck.
out=$("$@" 2>&1)
rc=$?
[ $rc = 2 ] || { echo "expected exit 2, got $rc: $out"; exit 1; }
[ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || { echo "expected one line, got: $out"; exit 1; }
printf '%s\n' "$out"

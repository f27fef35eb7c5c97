#!/usr/bin/env bash
# Runs `tpusim check` over every conformance program and compares the failing
# cases with the known-failures list: a new failure fails the test, and so
# does a listed case that no longer fails (so the list stays honest).
#
# usage: conformance_test.sh TPUSIM CONFORMANCE_DIR KNOWN_FAILURES
#   CONFORMANCE_DIR holds testdata/ and interpret/; KNOWN_FAILURES has one
#   "file:line reason" per line (# comments allowed), file relative to it.
set -uo pipefail
tpusim=$1 root=$2 known=$3

cd "$root" || exit 1
mapfile -t files < <(find testdata interpret -name '*.mlir' | LC_ALL=C sort)
out=$("$tpusim" check "${files[@]}")
rc=$?
summary=$(tail -n 1 <<<"$out")
echo "$summary"
if [[ $rc -gt 1 || ! $summary =~ ^[0-9]+\ passed ]]; then
  echo "tpusim check did not finish normally (exit $rc)"
  exit 1
fi

actual=$(grep '^FAIL ' <<<"$out" | awk '{print $2}' | LC_ALL=C sort -u)
expected=$(sed -e 's/#.*//' "$known" | awk 'NF {print $1}' | LC_ALL=C sort -u)
new=$(LC_ALL=C comm -23 <(echo "$actual") <(echo "$expected") | sed '/^$/d')
fixed=$(LC_ALL=C comm -13 <(echo "$actual") <(echo "$expected") | sed '/^$/d')

status=0
if [[ -n $new ]]; then
  echo "new failures (not in $known):"
  while read -r loc; do grep -F "FAIL $loc " <<<"$out"; done <<<"$new"
  status=1
fi
if [[ -n $fixed ]]; then
  echo "listed in $known but no longer failing (remove them):"
  echo "$fixed"
  status=1
fi
exit $status

#!/usr/bin/env bash
# Every usage line in the header comments of examples/ ("//   tpusim run
# examples/...", "#   tpusim ..."), run from the repository's root as a
# reader would paste it: each must exit 0. New examples are picked up as
# they come, so a usage line cannot rot.
#
# usage: usage_test.sh TPUSIM REPO_ROOT
set -uo pipefail
tpusim=$1
root=$2
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

count=0
while IFS= read -r line; do
  file=${line%%:*}
  command=$(sed -E 's/^[^:]*:[0-9]+:(\/\/|#) +tpusim +//' <<<"$line")
  count=$((count + 1))
  # Outputs go to the scratch directory; paths in the line are the root's.
  read -ra args <<<"$command"
  (cd "$root" && "$tpusim" "${args[@]}" --output-dir "$work/out.$count") >"$work/$count.txt" 2>&1 ||
    fail "$file: tpusim $command: $(tail -n 1 "$work/$count.txt")"
done < <(cd "$root" && grep -rnE '^(//|#) +tpusim +run ' examples)
[[ $count -gt 0 ]] || fail "no usage lines found under $root/examples"

echo "$count usage lines, $failures failed"
exit $((failures > 0))

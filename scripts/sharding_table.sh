#!/usr/bin/env bash
# Prints, as a markdown table, what the SPMD partitioner makes of each
# global program in examples/sharding: the collectives it adds, and the
# step time, MFU and exposed communication on two 8-chip slices (v5e-8 and
# v5p-16), from `tpusim run --timing-only`. docs/spmd.md quotes its output.
#
# usage: scripts/sharding_table.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
tpusim=$PWD/${1:-build}/tpusim
[[ -x $tpusim ]] || { echo "no $tpusim; build first (scripts/build.sh)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

slices=(v5e-8 v5p-16)
printf '| example | collectives added |'
for s in "${slices[@]}"; do printf ' %s step | MFU | exposed comm. |' "$s"; done
printf '\n|---|---|'
for _ in "${slices[@]}"; do printf -- '---|---|---|'; done
printf '\n'
for f in examples/sharding/*.mlir; do
  name=$(basename "$f" .mlir)
  row=""
  for s in "${slices[@]}"; do
    "$tpusim" run "$f" --slice "$s" --timing-only --no-cache >"$work/out.txt"
    added=$(sed -n 's/^note: SPMD partitioner: .*; added //p' "$work/out.txt")
    step=$(sed -n 's/^  time  *\([0-9]\)/\1/p' "$work/out.txt")
    mfu=$(sed -n 's/.*(MFU \([0-9.]*%\)).*/\1/p' "$work/out.txt" | head -n 1)
    exposed=$(sed -n 's/^  communication .* in collectives, \(.*\) of it exposed.*/\1/p' "$work/out.txt")
    row+=" $step | $mfu | $exposed |"
  done
  printf '| %s | %s |%s\n' "$name" "$added" "$row"
done

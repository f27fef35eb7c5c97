#!/usr/bin/env bash
# Predicted vs. measured time of single collectives on TPU slices: the
# published microbenchmarks docs/pod.md checks the collective model
# against. Each row is one collective in a one-op program, timed with
# --timing-only on the slice it ran on. Prints the markdown table that
# docs/pod.md quotes.
#
# Sources, and how each time is read from them:
# [I] AI-Hypercomputer tpu-recipes, microbenchmarks/ironwood/collectives/
#     all_gather.md: tpu7x 2x2x1, f32, all-gather over groups of 4 devices
#     (one TensorCore of each chip; the two groups run at once), profiler
#     device time; the time is its "transferred data" over its "achieved
#     bandwidth".
# [A] accelerator-microbenchmarks issue 71: tpu7x 2x2x4, f32 psum over all
#     32 devices, p50 step time.
# [T] tpu-recipes microbenchmarks/trillium/collectives/README.md: v6e-256,
#     bf16 psum of 17408 x 17408 over all 256 devices; the time is the
#     matrix's bytes x 2 (n-1)/n over the bandwidth the log reports
#     (wall clock, the average of back-to-back calls).
# [P] marin issue 6736: v5p-8 and v6e-8 ppermute of 1 and 64 MiB a device,
#     device time from the slope over repeat counts; the permutation is not
#     stated, a shift by one is assumed here.
#
# usage: scripts/collectives.sh [BUILD_DIR]   (or TPUSIM=path/to/tpusim)
set -euo pipefail
cd "$(dirname "$0")/.."
tpusim=${TPUSIM:-$PWD/${1:-build}/tpusim}
[[ -x $tpusim ]] || { echo "no $tpusim; build first (scripts/build.sh)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# slice | collective | devices | groups | rows of 8x128 f32 (or bf16 elements) | measured us | source
rows=(
  "tpu7x-8|all_gather|8|[[0,2,4,6],[1,3,5,7]]|64|21.915|I"
  "tpu7x-8|all_gather|8|[[0,2,4,6],[1,3,5,7]]|256|48.700|I"
  "tpu7x-8|all_gather|8|[[0,2,4,6],[1,3,5,7]]|1024|155.437|I"
  "tpu7x-8|all_gather|8|[[0,2,4,6],[1,3,5,7]]|4096|575.991|I"
  "tpu7x-8|all_gather|8|[[0,2,4,6],[1,3,5,7]]|16384|2252.335|I"
  "tpu7x-32|all_reduce|32|all|512|123.764|A"
  "tpu7x-32|all_reduce|32|all|1024|129.910|A"
  "tpu7x-32|all_reduce|32|all|2048|162.323|A"
  "v5p-8|permute|4|shift|256|16.94|P"
  "v5p-8|permute|4|shift|16384|781.98|P"
  "v6e-8|permute|8|shift|256|17.45|P"
  "v6e-8|permute|8|shift|16384|776.34|P"
  "v6e-256|all_reduce|256|all|bf16:17408x17408|5121.4|T"
)

groups() {  # devices spec -> replica_groups attribute text
  local n=$1 spec=$2
  if [[ $spec == all ]]; then
    echo "dense<[[$(seq -s, 0 $((n - 1)))]]> : tensor<1x${n}xi64>"
  else
    local count=$(($(tr -cd '[' <<<"$spec" | wc -c) - 1))
    echo "dense<$spec> : tensor<${count}x$((n / count))xi64>"
  fi
}

program() {  # collective devices groups size -> a one-op program
  local op=$1 n=$2 spec=$3 size=$4 t in out
  if [[ $size == bf16:* ]]; then
    t="tensor<${size#bf16:}xbf16>"; in=$t; out=$t
    local elem=bf16
  else
    in="tensor<${size}x8x128xf32>"; out=$in
    local elem=f32
  fi
  echo "module attributes {mhlo.num_partitions = $n : i32, mhlo.num_replicas = 1 : i32} {"
  case $op in
    all_gather)
      local g=$(groups "$n" "$spec") per=$(($(tr -cd ',' <<<"${spec%%]*}" | wc -c) + 1))
      out="tensor<$((size * per))x8x128xf32>"
      echo "  func.func @main(%x: $in) -> $out {"
      echo "    %r = \"stablehlo.all_gather\"(%x) <{all_gather_dim = 0 : i64, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = $g, use_global_device_ids}> : ($in) -> $out"
      ;;
    all_reduce)
      echo "  func.func @main(%x: $in) -> $out {"
      echo "    %r = \"stablehlo.all_reduce\"(%x) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = $(groups "$n" all), use_global_device_ids}> ({"
      echo "    ^bb0(%a: tensor<$elem>, %b: tensor<$elem>):"
      echo "      %s = stablehlo.add %a, %b : tensor<$elem>"
      echo "      stablehlo.return %s : tensor<$elem>"
      echo "    }) : ($in) -> $out"
      ;;
    permute)
      local pairs="" i
      for ((i = 0; i < n; i++)); do pairs+="${pairs:+, }[$i, $(((i + 1) % n))]"; done
      echo "  func.func @main(%x: $in) -> $out {"
      echo "    %r = \"stablehlo.collective_permute\"(%x) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, source_target_pairs = dense<[$pairs]> : tensor<${n}x2xi64>}> : ($in) -> $out"
      ;;
  esac
  echo "    return %r : $out"
  echo "  }"
  echo "}"
}

echo "| slice | collective | bytes a device | measured | predicted | relative error | source |"
echo "|---|---|---|---|---|---|---|"
for row in "${rows[@]}"; do
  IFS='|' read -r slice op n spec size measured source <<<"$row"
  program "$op" "$n" "$spec" "$size" >"$work/p.mlir"
  "$tpusim" run "$work/p.mlir" --slice "$slice" --timing-only --no-cache \
    --report-json "$work/r.json" >/dev/null
  /usr/bin/python3 - "$work/r.json" "$slice" "$op" "$size" "$measured" "$source" <<'PY'
import json, sys
report, slice_, op, size, measured, source = sys.argv[1:]
predicted = json.load(open(report))["total_seconds"] * 1e6
measured = float(measured)
if size.startswith("bf16:"):
    a, b = size[5:].split("x")
    nbytes = int(a) * int(b) * 2
else:
    nbytes = int(size) * 8 * 128 * 4
label = "%.0f MiB" % (nbytes / 2**20) if nbytes >= 2**20 else "%.0f KiB" % (nbytes / 2**10)
fmt = lambda us: "%.1f us" % us if us < 1000 else "%.3f ms" % (us / 1000)
print("| %s | %s | %s | %s | %s | %+.1f%% | [%s] |" % (slice_, op, label, fmt(measured), fmt(predicted),
                                                  100 * (predicted / measured - 1), source))
PY
done

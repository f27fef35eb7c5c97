#!/usr/bin/env bash
# Predicted vs. measured time of single ops on v6e and 7x: the bf16 matmul
# and HBM copy sweeps of ../shared/reference/tpu-facts.md ("Single-op
# measurements", [R]), each run as a one-op program with --timing-only on
# one device. Prints the markdown table that docs/validation.md quotes.
# The v6e and 7x calibration (src/hw/presets.cc) is fit on these rows only.
#
# usage: scripts/single_ops.sh [BUILD_DIR]   (or TPUSIM=path/to/tpusim)
set -euo pipefail
cd "$(dirname "$0")/.."
tpusim=${TPUSIM:-$PWD/${1:-build}/tpusim}
[[ -x $tpusim ]] || { echo "no $tpusim; build first (scripts/build.sh)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# chip | op | size | measured | unit of the measurement
# matmul: m = n = k, bf16 in and out; measured in TFLOP/s per device.
# copy: bytes copied; measured in GB/s counting the bytes read and written.
rows=(
  "v6e|matmul|8192|827.5|TFLOP/s"
  "v6e|copy|33554432|1359.6|GB/s"
  "7x|matmul|128|2.59|TFLOP/s"
  "7x|matmul|256|18.29|TFLOP/s"
  "7x|matmul|512|105.08|TFLOP/s"
  "7x|matmul|1024|349.73|TFLOP/s"
  "7x|matmul|2048|679.28|TFLOP/s"
  "7x|matmul|4096|892.94|TFLOP/s"
  "7x|matmul|16384|950.13|TFLOP/s"
  "7x|matmul|32768|956.38|TFLOP/s"
  "7x|copy|2097152|1379|GB/s"
  "7x|copy|33554432|3009|GB/s"
  "7x|copy|1073741824|3199|GB/s"
  "7x|copy|8589934592|3210|GB/s"
)

program() {  # op size -> a one-op StableHLO program on stdout
  if [[ $1 == matmul ]]; then
    local t="tensor<${2}x${2}xbf16>"
    echo "func.func @main(%a: $t, %b: $t) -> $t {"
    echo "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : ($t, $t) -> $t"
  else
    # A copy reads and writes every byte once: an elementwise op on f32.
    local t="tensor<$(($2 / 4))xf32>"
    echo "func.func @main(%a: $t) -> $t {"
    echo "  %0 = stablehlo.negate %a : $t"
  fi
  echo "  return %0 : $t"
  echo "}"
}

echo "| chip | op | size | measured | predicted | relative error |"
echo "|---|---|---|---|---|---|"
for row in "${rows[@]}"; do
  IFS='|' read -r chip op size rate unit <<<"$row"
  program "$op" "$size" >"$work/p.mlir"
  "$tpusim" run "$work/p.mlir" --chip "$chip" --timing-only --no-cache \
    --report-json "$work/r.json" >/dev/null
  /usr/bin/python3 - "$work/r.json" "$op" "$size" "$rate" "$chip" <<'PY'
import json, sys
report, op, size, rate, chip = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
predicted = json.load(open(report))["total_seconds"]
if op == "matmul":
    measured = 2 * size**3 / (rate * 1e12)
    label = "%d³ bf16" % size
else:
    measured = 2 * size / (rate * 1e9)
    label = "%.0f MiB" % (size / 2**20)
fmt = lambda s: "%.2f µs" % (s * 1e6) if s < 1e-3 else "%.3f ms" % (s * 1e3)
print("| %s | %s | %s | %s | %s | %+.1f%% |" % (chip, op, label, fmt(measured), fmt(predicted),
                                              100 * (predicted / measured - 1)))
PY
done

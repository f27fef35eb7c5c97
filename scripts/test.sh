#!/usr/bin/env bash
# Builds and runs every test: the unit and conformance tests in a normal
# build, a short run of each parser's fuzz target, and the tests again under
# AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
jobs=$(nproc)

echo "== release build and tests"
scripts/build.sh build
# The test-only Node client of the cloud_clients test, at its locked versions.
npm ci --prefix tests/cloud_clients/node --no-audit --no-fund --ignore-scripts --loglevel=error
ctest --test-dir build -j"$jobs" --output-on-failure

echo "== fuzz smoke run"
# Only the fuzz targets: they compile the parser into themselves.
CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DTPUSIM_FUZZ=ON -DTPUSIM_BENCH=OFF >/dev/null
ninja -C build-fuzz -j"$jobs" parse_fuzz hlo_fuzz model_fuzz prices_fuzz cloud_fuzz onnx_fuzz
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
mkdir "$corpus/mlir" "$corpus/hlo" "$corpus/model" "$corpus/prices" "$corpus/cloud" "$corpus/onnx"
build-fuzz/fuzz/parse_fuzz -max_total_time="${TPUSIM_FUZZ_SECONDS:-30}" -rss_limit_mb=4096 \
  "$corpus/mlir" examples tests/jax_exports ../shared/conformance/stablehlo/interpret 2>&1 | tail -n 3
build-fuzz/fuzz/hlo_fuzz -max_total_time="${TPUSIM_FUZZ_SECONDS:-30}" -rss_limit_mb=4096 \
  "$corpus/hlo" examples tests/hlo 2>&1 | tail -n 3
build-fuzz/fuzz/model_fuzz -max_total_time="${TPUSIM_FUZZ_SECONDS:-30}" -rss_limit_mb=4096 \
  "$corpus/model" models 2>&1 | tail -n 3
build-fuzz/fuzz/prices_fuzz -max_total_time="${TPUSIM_FUZZ_SECONDS:-30}" -rss_limit_mb=4096 \
  "$corpus/prices" prices 2>&1 | tail -n 3
build-fuzz/fuzz/cloud_fuzz -max_total_time="${TPUSIM_FUZZ_SECONDS:-30}" -rss_limit_mb=4096 \
  "$corpus/cloud" tests/cloud_corpus 2>&1 | tail -n 3
build-fuzz/fuzz/onnx_fuzz -max_total_time="${TPUSIM_FUZZ_SECONDS:-30}" -rss_limit_mb=4096 \
  "$corpus/onnx" examples/onnx /usr/share/libonnx-testdata/data/node 2>&1 | tail -n 3

echo "== ASan + UBSan build and tests"
scripts/build.sh build-asan -DTPUSIM_SANITIZE=ON -DTPUSIM_BENCH=OFF
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan -j"$jobs" --output-on-failure

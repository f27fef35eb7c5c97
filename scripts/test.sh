#!/usr/bin/env bash
# Builds and runs every test: the unit and conformance tests in a normal
# build, the same again under AddressSanitizer + UndefinedBehaviorSanitizer,
# and a short run of each parser fuzz target.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
jobs=$(nproc)

echo "== release build and tests"
scripts/build.sh build
ctest --test-dir build -j"$jobs" --output-on-failure

echo "== ASan + UBSan build and tests"
scripts/build.sh build-asan -DTPUSIM_SANITIZE=ON -DTPUSIM_BENCH=OFF
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan -j"$jobs" --output-on-failure

echo "== fuzz smoke run"
CXX=clang++ scripts/build.sh build-fuzz -DTPUSIM_FUZZ=ON -DTPUSIM_BENCH=OFF
for f in build-fuzz/fuzz/*_fuzz; do
  "$f" -max_total_time="${TPUSIM_FUZZ_SECONDS:-30}" -rss_limit_mb=4096 \
       fuzz/corpus/"$(basename "$f")" ../shared/conformance/stablehlo/interpret 2>&1 | tail -n 3
done

#!/usr/bin/env bash
# The one-command start: installs what is missing, builds, and runs the
# bundled example (the Cloud TPU tutorial's 2048x2048 f32 matmul).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh build
build/tpusim run examples/matmul.mlir --random-inputs --seed 0 --output-dir out/matmul

#!/usr/bin/env bash
# Exports ResNet-50 and a BERT-base encoder with PyTorch into a temporary
# directory (scripts/onnx_export_models.py; about 540 MB, removed on exit),
# times a forward pass of each on v5e and v6e with `tpusim run --timing-only`,
# and prints a markdown table. docs/onnx-models.md quotes its output.
#
# usage: scripts/onnx_model_timing.sh [BUILD_DIR]   (default: build)
# Needs /usr/bin/python3 with torch, torchvision and onnx. Takes a few minutes,
# most of it in importing BERT's 440 MB of weights.
set -euo pipefail
cd "$(dirname "$0")/.."
tpusim=$PWD/${1:-build}/tpusim
[[ -x $tpusim ]] || { echo "no $tpusim; build first (scripts/build.sh)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 scripts/onnx_export_models.py "$work" >&2

# row MODEL CHIP ARGS...: one table row from the model's JSON report.
row() {
  local model=$1 chip=$2; shift 2
  "$tpusim" run "$work/$model.onnx" --timing-only --chip "$chip" --no-cache "$@" \
    --report-json "$work/r.json" >"$work/report.txt"
  /usr/bin/python3 - "$work/r.json" "$work/report.txt" "$model" "$chip" "$*" <<'PY'
import json, re, sys
r = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
model, chip, args = sys.argv[3:6]
kernels = re.search(r"fusion: \d+ ops into (\d+) kernels? \(([^)]*)\)", text)
print(f"| {model} | {chip} | {r['total_seconds'] * 1e3:.2f} ms | {r['flops'] / 1e9:.1f} | "
      f"{100 * r['mfu']:.1f}% | {r['hbm_bytes'] / 1e9:.2f} GB | "
      f"{kernels.group(1)} ({kernels.group(2)}) |")
PY
}

echo "| model (batch 8) | chip | step time | GFLOP | MFU | HBM traffic | kernels |"
echo "|---|---|---|---|---|---|---|"
for chip in v5e v6e; do row r50 "$chip"; done
for chip in v5e v6e; do row bert "$chip" --arg-shape input_ids=8x128; done

#!/usr/bin/env bash
# Predicted vs. published MFU for the measured training runs of
# ../shared/reference/tpu-facts.md, each on the mesh the run used, from
# `tpusim plan --mesh ... --json`. Prints the markdown table that
# docs/validation.md quotes, the relative error per row and their mean.
#
# usage: scripts/validation.sh [BUILD_DIR]   (or TPUSIM=path/to/tpusim)
set -euo pipefail
cd "$(dirname "$0")/.."
tpusim=${TPUSIM:-$PWD/${1:-build}/tpusim}
[[ -x $tpusim ]] || { echo "no $tpusim; build first (scripts/build.sh)" >&2; exit 2; }
py=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# name | model | slice | global batch | mesh | published MFU (%) | role
rows=(
  "MaxText 22B, v4-128|maxtext-22b|v4-128|832|data=1,fsdp=64,tensor=1|56.7|calibration"
  "MaxText 52B, v4-384|maxtext-52b|v4:4x4x12|1344|data=1,fsdp=192,tensor=1|56.0|prediction"
  "PaLM 540B, 2 x 3072 v4|palm-540b|2xv4:12x16x16|2048|data=2,fsdp=256,tensor=12|46.2|prediction"
)

echo "| run | slice | mesh | published MFU | predicted MFU | relative error | step | exposed comm. | role |"
echo "|---|---|---|---|---|---|---|---|---|"
for row in "${rows[@]}"; do
  IFS='|' read -r name model slice batch mesh published role <<<"$row"
  "$tpusim" plan --model "$model" --slice "$slice" --global-batch "$batch" --seq 2048 \
    --mesh "$mesh" --remat full --microbatches 1 --max-tensor 16 --json "$work/plan.json" >/dev/null 2>"$work/err.txt" ||
    { echo "$name: $(tail -n 1 "$work/err.txt")" >&2; exit 1; }
  "$py" - "$work/plan.json" "$name" "$slice" "$mesh" "$published" "$role" >>"$work/rows.txt" <<'PY'
import json, sys
plan, name, slice_, mesh, published, role = sys.argv[1:]
c = json.load(open(plan))["candidates"][0]
if not c["fits"]:
    sys.exit(f"{name}: does not fit: {c['rejected']}")
mfu, pub = 100 * c["mfu"], float(published)
err = (mfu - pub) / pub
print(f"| {name} | {slice_} | {mesh} | {pub:.1f}% | {mfu:.1f}% | {100 * err:+.1f}% "
      f"| {c['step_seconds']:.2f} s | {c['exposed_communication_seconds']:.2f} s | {role} |")
PY
done
cat "$work/rows.txt"
"$py" - "$work/rows.txt" <<'PY'
import sys
rows = [l.split("|") for l in open(sys.argv[1])]
errs = [abs(float(r[6].strip().rstrip("%"))) for r in rows]
pred = [e for e, r in zip(errs, rows) if r[9].strip() == "prediction"]
print(f"\nMean absolute relative error: {sum(errs) / len(errs):.1f}% over all {len(errs)} runs, "
      f"{sum(pred) / len(pred):.1f}% over the {len(pred)} predictions; largest {max(errs):.1f}%.")
PY

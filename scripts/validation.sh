#!/usr/bin/env bash
# Predicted vs. published MFU for measured training runs: those of
# ../shared/reference/tpu-facts.md and MaxText's published v5p and v5e
# results, each on the mesh, batch and rematerialization the run used, from
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

# name | model | slice | global batch | mesh | remat | published MFU (%) | role
# The global batch is the run's per-device batch times its chips. MaxText's
# "minimal" remat keeps every projection's output (checkpoint_dots_with_no_batch_dims).
rows=(
  "MaxText 22B, v4-128|maxtext-22b|v4-128|832|data=1,fsdp=64,tensor=1|full|56.7|calibration (v4)"
  "MaxText 52B, v4-384|maxtext-52b|v4:4x4x12|1344|data=1,fsdp=192,tensor=1|full|56.0|prediction"
  "PaLM 540B, 2 x 3072 v4|palm-540b|2xv4:12x16x16|2048|data=2,fsdp=256,tensor=12|full|46.2|prediction"
  "MaxText 32B, v5p-128|maxtext-32b|v5p-128|384|data=1,fsdp=16,tensor=4|minimal|71.47|prediction"
  "MaxText 64B, v5p-128|maxtext-64b|v5p-128|192|data=1,fsdp=16,tensor=4|minimal|70.31|prediction"
  "MaxText 128B, v5p-256|maxtext-128b|v5p-256|128|data=1,fsdp=16,tensor=8|minimal|68.68|calibration (v5p)"
  "MaxText 128B, v5p-512|maxtext-128b|v5p-512|256|data=1,fsdp=32,tensor=8|minimal|68.53|prediction"
  "MaxText 256B, v5p-1024|maxtext-256b|v5p-1024|512|data=1,fsdp=64,tensor=8|minimal|68.82|prediction"
  "MaxText 512B, v5p-1024|maxtext-512b|v5p-1024|1024|data=1,fsdp=64,tensor=8|full|63.99|prediction"
  "MaxText 1024B, v5p-2048|maxtext-1024b|v5p-2048|2048|data=1,fsdp=64,tensor=16|full|64.05|prediction"
  "MaxText 1024B, v5p-4096|maxtext-1024b|v5p-4096|4096|data=1,fsdp=128,tensor=16|full|64.80|prediction"
  "MaxText 16B, v5e-256|maxtext-16b|v5litepod-256|1536|data=1,fsdp=256,tensor=1|full|61.10|calibration (v5e)"
  "MaxText 32B, v5e-256|maxtext-32b|v5litepod-256|1024|data=1,fsdp=256,tensor=1|full|66.86|prediction"
  "MaxText 64B, v5e-256|maxtext-64b|v5litepod-256|512|data=1,fsdp=256,tensor=1|full|59.90|prediction"
  "MaxText 128B, v5e-256|maxtext-128b|v5litepod-256|256|data=1,fsdp=16,tensor=16|qkv_proj_offloaded|56.06|prediction"
  # Several slices over DCN, the data axis across them (MaxText's default
  # dcn_data_parallelism): configs/v5p/README.md and the README's v5e table.
  "MaxText 32B, 2 x v5p-128|maxtext-32b|2xv5p-128|768|data=2,fsdp=16,tensor=4|minimal|69.43|prediction"
  "MaxText 64B, 2 x v5p-128|maxtext-64b|2xv5p-128|384|data=2,fsdp=16,tensor=4|minimal|67.26|prediction"
  "MaxText 128B, 2 x v5p-256|maxtext-128b|2xv5p-256|256|data=2,fsdp=16,tensor=8|minimal|66.34|prediction"
  "MaxText 128B, 2 x v5p-512|maxtext-128b|2xv5p-512|512|data=2,fsdp=32,tensor=8|minimal|59.66|prediction"
  "MaxText 256B, 2 x v5p-1024|maxtext-256b|2xv5p-1024|1024|data=2,fsdp=64,tensor=8|minimal|62.99|prediction"
  "MaxText 512B, 2 x v5p-1024|maxtext-512b|2xv5p-1024|2048|data=2,fsdp=64,tensor=8|full|61.45|prediction"
  "MaxText 1024B, 2 x v5p-2048|maxtext-1024b|2xv5p-2048|4096|data=2,fsdp=64,tensor=16|full|51.55|prediction"
  "MaxText 1024B, 2 x v5p-4096|maxtext-1024b|2xv5p-4096|8192|data=2,fsdp=128,tensor=16|full|60.83|prediction"
  "MaxText 16B, 2 x v5e-256|maxtext-16b|2xv5litepod-256|3072|data=2,fsdp=256,tensor=1|full|59.37|prediction"
  "MaxText 16B, 4 x v5e-256|maxtext-16b|4xv5litepod-256|6144|data=4,fsdp=256,tensor=1|full|59.14|prediction"
  "MaxText 16B, 8 x v5e-256|maxtext-16b|8xv5litepod-256|12288|data=8,fsdp=256,tensor=1|full|58.27|prediction"
  "MaxText 16B, 16 x v5e-256|maxtext-16b|16xv5litepod-256|24576|data=16,fsdp=256,tensor=1|full|56.56|prediction"
  "MaxText 16B, 32 x v5e-256|maxtext-16b|32xv5litepod-256|49152|data=32,fsdp=256,tensor=1|full|54.65|prediction"
)

echo "| run | slice | mesh | remat | mb | published MFU | predicted MFU | relative error | step | exposed comm. | role |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for row in "${rows[@]}"; do
  IFS='|' read -r name model slice batch mesh remat published role <<<"$row"
  # No --microbatches: the plan takes the fewest that fit HBM (1 where the
  # run fits as it ran); a run that fits at none is listed as such.
  "$tpusim" plan --model "$model" --slice "$slice" --global-batch "$batch" --seq 2048 \
    --mesh "$mesh" --remat "$remat" --max-tensor 16 --json "$work/plan.json" >/dev/null 2>"$work/err.txt" ||
    grep -q 'fits no mesh' "$work/err.txt" ||
    { echo "$name: $(tail -n 1 "$work/err.txt")" >&2; exit 1; }
  "$py" - "$work/plan.json" "$name" "$slice" "$mesh" "$remat" "$published" "$role" >>"$work/rows.txt" <<'PY'
import json, re, sys
plan, name, slice_, mesh, remat, published, role = sys.argv[1:]
c = json.load(open(plan))["candidates"][0]
pub = float(published)
if not c["fits"]:
    need = re.search(r"needs (\S+ \S+) of HBM but \S+ has (\S+ \S+)", c["rejected"])
    why = f"needs {need[1]} of {need[2]}" if need else "does not fit"
    print(f"| {name} | {slice_} | {mesh} | {remat} | - | {pub:.1f}% | does not fit HBM ({why}) "
          f"| - | - | - | {role} |")
    sys.exit()
mfu = 100 * c["mfu"]
err = (mfu - pub) / pub
print(f"| {name} | {slice_} | {mesh} | {remat} | {c['microbatches']} | {pub:.1f}% | {mfu:.1f}% "
      f"| {100 * err:+.1f}% | {c['step_seconds']:.2f} s | {c['exposed_communication_seconds']:.2f} s "
      f"| {role} |")
PY
done
cat "$work/rows.txt"
"$py" - "$work/rows.txt" <<'PY'
import sys
rows = [[f.strip() for f in l.split("|")] for l in open(sys.argv[1])]
ran = [r for r in rows if r[8] != "-"]
errs = [abs(float(r[8].rstrip("%"))) for r in ran]
pred = [e for e, r in zip(errs, ran) if r[11] == "prediction"]
within = sum(e <= 10 for e in errs)
print(f"\nMean absolute relative error: {sum(errs) / len(errs):.1f}% over the {len(errs)} runs "
      f"timed, {sum(pred) / len(pred):.1f}% over the {len(pred)} predictions; largest "
      f"{max(errs):.1f}%. Within 10%: {within} of {len(rows)} runs"
      f"{f' ({len(rows) - len(ran)} not fitting HBM here)' if len(ran) < len(rows) else ''}.")
PY

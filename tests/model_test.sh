#!/usr/bin/env bash
# End-to-end tests of `tpusim model`: the library lists and describes its
# models; a small model's train step, emitted with shardings over a
# data x fsdp x tensor mesh, runs partitioned on a v5e-8 slice to the values
# of the same step run whole; a real model's step is timed on a slice; bad
# requests are one-line errors.
#
# usage: model_test.sh TPUSIM
set -uo pipefail
tpusim=$1
root=$(cd "$(dirname "$0")/.." && pwd)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

"$tpusim" model --list >list.txt 2>&1 || fail "--list: $(cat list.txt)"
[[ $(wc -l <list.txt) -ge 16 ]] || fail "--list: $(wc -l <list.txt) models"
grep -q '^llama3.1-405b  *405.853B' list.txt || fail "--list: $(grep 405b list.txt)"
"$tpusim" model llama3-8b >describe.txt 2>&1 || fail "describe: $(cat describe.txt)"
grep -q '8.030B counted (8.030B published, +0.00%)' describe.txt || fail "describe: $(cat describe.txt)"

# A model of the user's own, small enough to run: 2 layers, grouped-query
# attention, a vocabulary (11) that the tensor axis splits unevenly.
cat >tiny.toml <<'TOML'
name = "tiny"
description = "two layers, for tests"
sources = ["tests/model_test.sh"]
published_params = 2000

[architecture]
layers = 2
d_model = 16
heads = 4
kv_heads = 2
head_dim = 4
d_ff = 24
vocab = 11
mlp = "swiglu"
norm = "rmsnorm"
bias = false
tied_embeddings = false
position_embeddings = 0
max_seq = 8
TOML
# check_partitioned NAME [MESH [DIR FLAGS...]]: the step of model file
# NAME.toml, emitted with shardings over the 8 devices of MESH (default
# data=2,fsdp=2,tensor=2) and FLAGS (default --batch 4), runs partitioned
# on v5e-8 to the values of the whole step, in DIR/ (default NAME/).
check_partitioned() {
  local name=$1 mesh=${2:-data=2,fsdp=2,tensor=2} dir=${3:-$1}
  local flags=("${@:4}")
  [[ ${#flags[@]} -gt 0 ]] || flags=(--batch 4)
  mkdir -p "$dir" && cp "$name.toml" "$dir/" && pushd "$dir" >/dev/null
  "$tpusim" model --file "$name.toml" --emit step.mlir "${flags[@]}" --dtype f32 \
    --mesh "$mesh" >emit.txt 2>&1 || fail "emit: $(cat emit.txt)"
  grep -qF "sdy.mesh @mesh = <[$(sed -E 's/([a-z]+)=/"\1"=/g; s/,/, /g' <<<"$mesh")]>" step.mlir ||
    fail "emit: no mesh $mesh"
  # Inputs: parameters, zero moments, step 1, tokens and targets in the vocabulary.
  $py - <<'PY' || fail "inputs"
import re
import numpy as np
text = open("step.mlir").read()
sig = text[text.index("@main(") : text.index(")\n")]
rng = np.random.default_rng(3)
for name, dims, et in re.findall(r"%(\w+): tensor<([0-9x]*)x?(f32|i32)>", sig):
    shape = [int(d) for d in dims.split("x") if d]
    if et == "i32":
        a = rng.integers(0, 11, shape).astype(np.int32)
    elif name.startswith(("m_", "v_")):
        a = np.zeros(shape, np.float32)
    elif name == "step":
        a = np.array(1, np.float32)
    else:
        a = (0.5 * rng.standard_normal(shape)).astype(np.float32)
    np.save(name + ".npy", a)
    print(f"--input {name}={name}.npy", end=" ", file=open("flags.txt", "a"))
PY
  # shellcheck disable=SC2046
  "$tpusim" run step.mlir $(cat flags.txt) --output-dir whole >whole.txt 2>&1 ||
    fail "$dir whole run: $(tail -n 1 whole.txt)"
  # shellcheck disable=SC2046
  "$tpusim" run step.mlir --slice v5e-8 $(cat flags.txt) --output-dir split >split.txt 2>&1 ||
    fail "$dir partitioned run: $(tail -n 1 split.txt)"
  grep -q 'SPMD partitioner: the global program split over 8 devices' split.txt ||
    fail "$dir not partitioned: $(grep SPMD split.txt)"
  $py - <<'PY' || fail "$dir: the partitioned step's values differ from the whole one's"
import glob
import numpy as np
files = sorted(glob.glob("whole/*.npy"))
assert len(files) >= 30, len(files)
for f in files:
    a = np.load(f).astype(np.float64)
    b = np.load(f.replace("whole/", "split/")).astype(np.float64)
    assert a.shape == b.shape, (f, a.shape, b.shape)
    assert np.all(np.isfinite(a)), f
    assert np.abs(a - b).max() <= 1e-4 * max(np.abs(a).max(), 1e-3), (f, np.abs(a - b).max())
PY
  popd >/dev/null
}
check_partitioned tiny
# Kept matmul outputs and two microbatches of 4, partitioned alike.
check_partitioned tiny data=2,fsdp=2,tensor=2 tiny-micro --batch 8 --microbatches 2 --remat selective
# The sequence (8 tokens) split in 2 beside data or tensor: flash attention
# keeps each device's query rows and gathers the keys and values; spelled
# out, its causal mask compares global positions.
check_partitioned tiny data=2,sequence=2,fsdp=2 tiny-seq-data
check_partitioned tiny data=2,sequence=2,fsdp=2 tiny-seq-spelled --batch 4 --no-flash-attention
check_partitioned tiny tensor=2,sequence=2,fsdp=2 tiny-seq-tensor
check_partitioned tiny data=2,sequence=2,fsdp=2 tiny-seq-micro --batch 8 --microbatches 2 \
  --remat selective
# PaLM's block: LayerNorm, attention and MLP side by side, one kv head that
# the tensor axis cannot split (every device keeps it), tied embeddings.
cat >palmish.toml <<'TOML'
name = "palmish"
description = "PaLM's block, for tests"
[architecture]
layers = 2
d_model = 16
heads = 4
kv_heads = 1
head_dim = 4
d_ff = 24
vocab = 11
mlp = "swiglu"
norm = "layernorm"
tied_embeddings = true
parallel_layers = true
max_seq = 8
TOML
check_partitioned palmish
check_partitioned palmish sequence=2,tensor=2,data=2 palmish-seq
check_partitioned palmish sequence=2,tensor=2,data=2 palmish-seq-spelled --batch 4 \
  --no-flash-attention
# GPT-3's block: LayerNorm with shift, a bias on every projection (split as
# its weight's output), a GELU MLP, a learned position table longer than the
# sequence, tied embeddings.
cat >gpt3ish.toml <<'TOML'
name = "gpt3ish"
description = "GPT-3's block, for tests"
[architecture]
layers = 2
d_model = 16
heads = 4
kv_heads = 4
head_dim = 4
d_ff = 24
vocab = 11
mlp = "gelu"
norm = "layernorm"
bias = true
tied_embeddings = true
position_embeddings = 12
max_seq = 8
TOML
check_partitioned gpt3ish
check_partitioned gpt3ish sequence=2,tensor=2,data=2 gpt3ish-seq
# Mixtral's MLP, 4 experts of 2 per token (some tokens dropped at the
# default capacity factor), over fsdp, expert and tensor axes: two
# all-to-alls each way through the experts.
sed -e 's/^name = "tiny"/name = "moe"/' -e '$a [moe]\nexperts = 4\nexperts_per_token = 2' \
  tiny.toml >moe.toml
check_partitioned moe fsdp=2,expert=2,tensor=2
grep -q 'SPMD partitioner: .*all_to_all' moe/split.txt || fail "moe: no all-to-all: $(grep SPMD moe/split.txt)"

# A real model's step, timed on a slice: partitioned, fitted into HBM.
"$tpusim" model llama3-8b --emit llama.mlir --batch 8 --seq 1024 --mesh fsdp=4,tensor=2 >/dev/null 2>&1 ||
  fail "emit llama3-8b"
"$tpusim" run llama.mlir --slice v5p-16 --timing-only >llama.txt 2>&1 || fail "llama3-8b: $(tail -n 1 llama.txt)"
grep -q 'MFU over the slice' llama.txt || fail "llama3-8b: no MFU"
grep -q 'while at llama.mlir:[0-9:]*: 32 iterations inferred' llama.txt || fail "llama3-8b: layers not counted"
# GPT-3 175B (biases, learned positions): its parameters and AdamW's moments
# (2.1 TB in f32) fit v5p-128's 64 chips, not v5p-32's 16.
"$tpusim" model gpt3-175b --emit gpt3.mlir --batch 32 --seq 2048 --mesh fsdp=32,tensor=2 >/dev/null 2>&1 ||
  fail "emit gpt3-175b"
"$tpusim" run gpt3.mlir --slice v5p-128 --timing-only >gpt3.txt 2>&1 || fail "gpt3-175b: $(tail -n 1 gpt3.txt)"
grep -q 'MFU over the slice' gpt3.txt || fail "gpt3-175b: no MFU"
grep -q 'while at gpt3.mlir:[0-9:]*: 96 iterations inferred' gpt3.txt || fail "gpt3-175b: layers not counted"
# A trillion parameters (Megatron-LM's GPT 1T) fits v5p-2048 with the
# weights split 1024 ways, not 256.
"$tpusim" plan --model gpt3-1t --slice v5p-2048 --global-batch 1536 --seq 2048 --remat selective \
  --microbatches 6 --mesh fsdp=128,tensor=8 --json 1t.json >1t.txt 2>/dev/null || fail "plan gpt3-1t: $(tail -n 1 1t.txt)"
"$tpusim" plan --model gpt3-1t --slice v5p-2048 --global-batch 1536 --seq 2048 --remat full \
  --mesh data=4,fsdp=64,tensor=4 >1t-oom.txt 2>&1 && fail "plan gpt3-1t: 256-way weights fit"
grep -q 'rejected v5p-2048 --mesh data=4,fsdp=64,tensor=4 .*: @main needs .* of HBM but v5p has' 1t-oom.txt ||
  fail "plan gpt3-1t: $(tail -n 1 1t-oom.txt)"
$py - <<'PY' || fail "plan gpt3-1t: implausible"
import json
c = json.load(open("1t.json"))["candidates"][0]
assert c["fits"] and 0.2 < c["mfu"] < 0.7 and c["hbm_peak_bytes"] <= c["hbm_capacity_bytes"], c
PY
# Mixtral split over experts: the experts' matmuls each device's experts and
# sequences only (no op computed on whole arrays), tokens moved by all-to-alls.
"$tpusim" model mixtral-8x7b --emit mixtral.mlir --batch 8 --seq 512 --mesh fsdp=4,expert=2 \
  --param-dtype bf16 >/dev/null 2>&1 || fail "emit mixtral-8x7b"
"$tpusim" run mixtral.mlir --slice v5p-16 --timing-only >mixtral.txt 2>&1 ||
  fail "mixtral-8x7b: $(tail -n 1 mixtral.txt)"
grep -q 'MFU over the slice' mixtral.txt || fail "mixtral-8x7b: no MFU"
grep -q 'SPMD partitioner: .* 7 all_to_all' mixtral.txt || fail "mixtral-8x7b: $(grep SPMD mixtral.txt)"
grep -q 'whole arrays' mixtral.txt && fail "mixtral-8x7b: $(grep 'whole arrays' mixtral.txt)"

# tpusim plan: every mesh of two slices under every remat policy timed,
# fastest first, as a table and JSON.
"$tpusim" plan --model llama3-8b --slices v5e-16,v5p-16 --global-batch 32 --seq 2048 \
  --json plan.json >plan.txt 2>progress.txt || fail "plan: $(tail -n 1 plan.txt)"
grep -q '^best: v5p-16 with --mesh data=1,fsdp=8,tensor=1 --remat [a-z]* --microbatches 1$' plan.txt ||
  fail "plan: $(tail -n 3 plan.txt)"
last=$(grep -o 'planning: mesh [0-9]*/[0-9]*' progress.txt | tail -n 1)
[[ -n $last && ${last#planning: mesh } == "${last##*/}/${last##*/}" ]] ||
  fail "plan: no progress line: $(tail -n 1 progress.txt)"
[[ $(grep -c '^planning: mesh' progress.txt) == "${last##*/}" ]] || fail "plan: a progress line a mesh"
# The table names the rejected candidates' count and the closest miss; the
# JSON has them all.
grep -q '^  rejected [0-9]* candidates that do not fit HBM (--verbose or --json lists them); the closest:$' plan.txt ||
  fail "plan: no summary of the rejected: $(grep rejected plan.txt | head -n 2)"
[[ $(grep -c '^  rejected v' plan.txt) == 1 ]] || fail "plan: more than the closest rejected line"
$py - "${last##*/}" <<'PY' || fail "plan.json"
import json, sys
plan = json.load(open("plan.json"))
fits = [c for c in plan["candidates"] if c["fits"]]
meshes = {(c["slice"], c["data"], c["fsdp"], c["sequence"], c["tensor"]) for c in plan["candidates"]}
# Every mesh, sequence axes among them.
assert len(meshes) == int(sys.argv[1]) and fits, (len(meshes), sys.argv[1])
assert all(c["hbm_peak_bytes"] > c["hbm_capacity_bytes"] for c in plan["candidates"] if not c["fits"])
assert any(c["sequence"] > 1 for c in fits)
# Each mesh's full remat fits with the fewest microbatches: 1 here.
assert all(c["microbatches"] == 1 for c in fits if c["remat"] == "full")
assert {"full", "selective", "none"} <= {c["remat"] for c in fits}
# An offloaded form is tried only where its policy needed more microbatches
# than the one before it, and the plan finds some that fit with fewer.
mesh = lambda c: (c["slice"], c["data"], c["fsdp"], c["sequence"], c["tensor"])
by = {(mesh(c), c["remat"]): c for c in plan["candidates"]}
forms = {"custom:decoder_layer_input=offload": "full", "minimal_offloaded": "selective"}
for c in plan["candidates"]:
    if c["remat"] in forms:
        own = by[(mesh(c), forms[c["remat"]])]
        assert not own["fits"] or own["microbatches"] > 1, (c, own)
assert any(c["fits"] and c["microbatches"] < by[(mesh(c), "selective")]["microbatches"]
           for c in fits if c["remat"] == "minimal_offloaded")
times = [c["step_seconds"] for c in fits]
assert times == sorted(times), times
for c in fits:
    assert 0 < c["mfu"] < 1 and c["hbm_peak_bytes"] <= c["hbm_capacity_bytes"], c
for c in plan["candidates"]:
    devices = 8 if c["slice"] == "v5p-16" else 16
    assert c["data"] * c["fsdp"] * c["sequence"] * c["tensor"] == devices, c
PY
# Spot prices from a file of the user's: the cost column charges them.
cat >prices.toml <<'TOML'
[v5p]
on_demand = 4.20
spot = 1.00
as_of = "2026-11"
source = "model_test.sh"
TOML
"$tpusim" plan --model llama3-8b --slice v5p-16 --global-batch 32 --seq 2048 --remat full \
  --mesh fsdp=8 --prices prices.toml --spot >spot.txt 2>/dev/null || fail "plan --spot: $(tail -n 1 spot.txt)"
grep -q 'spot prices' spot.txt || fail "plan --spot: $(head -n 1 spot.txt)"
$py - <<'PY' || fail "plan --spot: the cost is not the spot price's"
import re
row = [l for l in open("spot.txt") if l.startswith("  v5p-16")][0].split()
step, tokens_per_s_per_chip, usd = float(row[4].rstrip("s")), float(row[6]), float(row[-1])
assert abs(usd - 1.00 / 3600 / tokens_per_s_per_chip * 1e6) < 0.01, (usd, row)
PY
# The built-in list's spot prices, in a region of the user's choosing.
"$tpusim" plan --model llama3-8b --slice v5p-16 --global-batch 32 --seq 2048 --remat full \
  --mesh fsdp=8 --spot --region us-east5 >region.txt 2>/dev/null || fail "plan --region: $(tail -n 1 region.txt)"
grep -q '^price v5p: \$1.560 per chip-hour spot in us-east5 (as of ' region.txt ||
  fail "plan --region: $(tail -n 1 region.txt)"
$py - <<'PY' || fail "plan --region: the cost is not us-east5's spot price"
row = [l for l in open("region.txt") if l.startswith("  v5p-16")][0].split()
tokens_per_s_per_chip, usd = float(row[6]), float(row[-1])
assert abs(usd - 1.56009 / 3600 / tokens_per_s_per_chip * 1e6) < 0.01, (usd, row)
PY
# The model on v5e-16 at batch 4 x 8192 needs more than one chip's 16 GB
# unless split: the replicated meshes are rejected with their memory.
"$tpusim" plan --model llama3-8b --slice v5e-16 --global-batch 16 --seq 4096 --verbose >oom.txt 2>/dev/null ||
  fail "plan oom: $(tail -n 1 oom.txt)"
grep -q 'rejected v5litepod-16 --mesh data=16,fsdp=1,tensor=1 --remat full --microbatches 1: @main needs .* of HBM but v5e has' oom.txt ||
  fail "plan oom: $(grep rejected oom.txt | head -n 1)"

# bad NAME STATUS MESSAGE ARGS...: exit STATUS, one line naming the problem.
# tpusim plan --serve: prefill and decode timed on the slice, then a
# simulation of continuous batching at a request rate.
"$tpusim" plan --model llama3-8b --serve --slice v6e-8 --batch 32 --prompt 1024 --gen 128 \
  --rate 4 --requests 200 --json serve.json >serve.txt 2>&1 || fail "serve: $(tail -n 1 serve.txt)"
grep -q '^serve: llama3-8b on v6e-8 (mesh data=1,tensor=8)' serve.txt || fail "serve: $(head -n 1 serve.txt)"
grep -q '200 requests at 4/s (Poisson, seed 1)' serve.txt || fail "serve: no loaded run"
$py - <<'PY' || fail "serve json"
import json
j = json.load(open("serve.json"))
for run in ("closed_batch", "at_rate"):
    t = j[run]["time_to_first_token_s"]
    assert 0 < t["p50"] <= t["p95"] <= t["p99"], t
assert j["kv_cache_bytes"] == 2 * 32 * 32 * (1024 + 128) * 8 * 128 * 2, j["kv_cache_bytes"]
assert j["hbm_peak_bytes"] < j["hbm_capacity_bytes"]
PY

# The validation table (docs/validation.md) still builds: every row
# simulated, and each calibration row meets the run it was fit on.
TPUSIM="$tpusim" "$root/scripts/validation.sh" >validation.txt 2>&1 ||
  fail "validation: $(tail -n 1 validation.txt)"
[[ $(grep -c '| prediction |\|| calibration (v[45][ep]*) |' validation.txt) == 28 ]] ||
  fail "validation: $(cat validation.txt)"
[[ $(grep '| calibration (' validation.txt | grep -c '| [+-]0\.[0-9]% |') == 3 ]] ||
  fail "validation: a calibration row is off: $(grep '| calibration (' validation.txt)"

# The single-op table: every measured op simulated, and each row v6e's and
# 7x's figures were read off lands within 1% of its measurement.
TPUSIM="$tpusim" "$root/scripts/single_ops.sh" >single_ops.txt 2>&1 ||
  fail "single ops: $(tail -n 1 single_ops.txt)"
[[ $(grep -c '^| \(v6e\|7x\) |' single_ops.txt) == 14 ]] || fail "single ops: $(cat single_ops.txt)"
for fit in "v6e | matmul | 8192³ bf16" "7x | matmul | 32768³ bf16" "v6e | copy | 32 MiB" \
  "7x | copy | 2 MiB" "7x | copy | 8192 MiB"; do
  grep -F "| $fit |" single_ops.txt | grep -q '| [+-]0\.[0-9]% |$' ||
    fail "single ops: the row $fit was fit on is off: $(cat single_ops.txt)"
done

# The collectives table (docs/pod.md): every published collective timed on
# its slice, each with a finite relative error.
TPUSIM="$tpusim" "$root/scripts/collectives.sh" >collectives.txt 2>&1 ||
  fail "collectives: $(tail -n 1 collectives.txt)"
[[ $(grep -c '| [+-][0-9.]*% | \[[IATP]\] |$' collectives.txt) == 13 ]] ||
  fail "collectives: $(cat collectives.txt)"

bad() {
  local name=$1 status=$2 message=$3; shift 3
  "$tpusim" model "$@" >out.txt 2>err.txt
  [[ $? == "$status" ]] || fail "$name: exit status"
  grep -q -- "$message" err.txt || fail "$name: $(cat err.txt)"
  [[ $(wc -l <err.txt) == 1 ]] || fail "$name: more than one line"
}
# Serving steps keep their weights in the activations' type unless told;
# train steps keep f32 master weights.
"$tpusim" model llama3-8b --step decode --emit decode.mlir --seq 64 --batch 2 >/dev/null ||
  fail "decode step"
grep -q '%wq: tensor<32x4096x4096xbf16>' decode.mlir || fail "decode weights are not bf16"
"$tpusim" model llama3-8b --step decode --emit decode.mlir --seq 64 --batch 2 --param-dtype f32 \
  >/dev/null || fail "decode step in f32"
grep -q '%wq: tensor<32x4096x4096xf32>' decode.mlir || fail "--param-dtype f32 not kept"
# Activation offload: Llama 3.1 8B on v6e-8 at 4 sequences of 8192 per chip
# does not fit with every layer input in HBM; offloaded to host it does,
# and the plan finds that form itself.
"$tpusim" plan --model llama3.1-8b --slice v6e-8 --global-batch 32 --seq 8192 --mesh fsdp=8 \
  --microbatches 1 >offload.txt 2>/dev/null || fail "offload plan: $(tail -n 1 offload.txt)"
grep -q '^best: v6e-8 with --mesh data=1,fsdp=8,tensor=1 --remat custom:decoder_layer_input=offload --microbatches 1$' \
  offload.txt || fail "offload plan: $(tail -n 2 offload.txt)"
grep -q '^  rejected v6e-8 .* --remat full --microbatches 1: @main needs' offload.txt ||
  fail "offload plan: full remat fits at 1 microbatch"
"$tpusim" model llama3-8b --emit offload.mlir --seq 256 --batch 8 --mesh fsdp=8 \
  --remat qkv_proj_offloaded >/dev/null || fail "qkv_proj_offloaded: emit"
[[ $(grep -c '_xla_buffer_placement = "pinned_host"' offload.mlir) == 3 &&
   $(grep -c '_xla_buffer_placement = "device"' offload.mlir) == 3 ]] ||
  fail "qkv_proj_offloaded: q, k and v are not each moved to host and back"
"$tpusim" run offload.mlir --slice v5p-16 --timing-only >offload.txt 2>&1 ||
  fail "qkv_proj_offloaded: $(tail -n 1 offload.txt)"
grep -q '^host memory: .* offloaded' offload.txt || fail "qkv_proj_offloaded: no host memory line"
"$tpusim" model llama3-8b --emit train.mlir --seq 64 --batch 2 >/dev/null || fail "train step"
grep -q '%wq: tensor<32x4096x4096xf32>' train.mlir || fail "train weights are not f32"

bad "unknown model" 2 "unknown model 'llama9'; the library has" llama9
bad "batch" 2 "a batch of 3 does not split over data x fsdp x expert = 4" llama3-8b --emit x.mlir --batch 3 --mesh data=4
bad "mesh" 2 "--mesh data=0: expected name=size" llama3-8b --emit x.mlir --mesh data=0
bad "axis" 2 "mesh axis 'model': expected data, fsdp, expert, tensor or sequence" llama3-8b --emit x.mlir --mesh model=2
bad "sequence" 2 "a sequence of 1000 tokens does not split over sequence = 3" \
  llama3-8b --emit x.mlir --seq 1000 --mesh sequence=3
bad "serve sequence" 3 "the prefill step of llama3-8b: a sequence axis is not built yet" \
  llama3-8b --step prefill --emit x.mlir --seq 64 --mesh sequence=2
bad "experts" 2 "mesh axis 'expert' = 3 does not divide the 8 experts of mixtral-8x7b" \
  mixtral-8x7b --emit x.mlir --batch 3 --mesh expert=3
bad "no experts" 2 "mesh axis 'expert': llama3-8b has no experts to split" llama3-8b --emit x.mlir --batch 2 --mesh expert=2
bad "microbatches" 2 "a microbatch of 2 does not split over data x fsdp x expert = 4" llama3-8b --emit x.mlir \
  --batch 8 --mesh data=4 --microbatches 4
bad "remat" 2 "remat policy 'some': expected full, selective, none, one of MaxText's" llama3-8b \
  --emit x.mlir --remat some
bad "tensor" 2 "mesh axis 'tensor' = 3 does not divide the 32 query heads and the MLP's 14336 hidden units of llama3-8b" \
  llama3-8b --emit x.mlir --batch 3 --mesh tensor=3
bad "seq 0" 2 "--seq: must be 1 or more, not 0 (see tpusim model --help)" llama3-8b --emit x.mlir --seq 0
bad "params" 2 "no model of family 'llama' with 9b parameters" llama --params 9b
bad "positions" 2 "the train step of gpt3-175b: seq 16385 exceeds the 16384 positions of its position table" \
  gpt3-175b --emit x.mlir --seq 16385
bad_plan() {
  local name=$1 status=$2 message=$3; shift 3
  "$tpusim" plan "$@" >out.txt 2>err.txt
  [[ $? == "$status" ]] || fail "plan $name: exit status"
  grep -q -- "$message" err.txt || fail "plan $name: $(cat err.txt)"
}
bad_plan "model" 2 "unknown model 'llama9'" --model llama9 --slice v5p-16 --global-batch 8
bad_plan "slice" 2 "no chip preset 'v9'" --model llama3-8b --slice v9-8 --global-batch 8
bad_plan "batch" 2 "a global batch of 3 sequences splits over the data and fsdp axes of no mesh of v5p-16" \
  --model llama3-8b --slice v5p-16 --global-batch 3 --max-tensor 4 --max-sequence 1
printf '[v5p]\non_demand = "4"\n' >bad-prices.toml
bad_plan "prices" 2 "bad-prices.toml:2:13: 'v5p.on_demand' has the wrong type" \
  --model llama3-8b --slice v5p-16 --global-batch 8 --prices bad-prices.toml
bad_plan "region" 2 "no price is recorded in region 'mars-north1' (the list has: asia-east1, " \
  --model llama3-8b --slice v5p-16 --global-batch 8 --region mars-north1
bad_plan "mesh" 2 "--mesh data=3 does not suit v5p-16 (8 devices)" \
  --model llama3-8b --slice v5p-16 --global-batch 8 --mesh data=3
bad_plan "fits nowhere" 2 "llama3-70b at batch 4 fits no mesh of v5e-4 in HBM" \
  --model llama3-70b --slice v5e-4 --global-batch 4 --seq 1024
[[ $(grep -cv '^planning: ' err.txt) == 1 ]] || fail "plan fits nowhere: more than one error line"
grep -q 'rejected v5litepod-4 --mesh data=1,fsdp=4,tensor=1 --remat full --microbatches 1: @main needs' out.txt ||
  fail "plan fits nowhere: no breakdown in the table"
bad_plan "serve sizes" 2 "plan --serve needs --batch (the most sequences decoding at once), --prompt (tokens per prompt) and --gen (tokens each request generates), each > 0; missing: --batch" \
  --model llama3-8b --serve --slice v6e-8 --prompt 16 --gen 4
bad_plan "serve fits nowhere" 2 "the decode step at batch 4 and context 19 on v5litepod-4: @main needs" \
  --model llama3-70b --serve --slice v5e-4 --batch 4 --prompt 16 --gen 4
sed 's/layers = 2/layerz = 2/' tiny.toml >typo.toml
bad "typo" 2 "typo.toml:7:10: unknown key 'architecture.layerz'" --file typo.toml
[[ ! -e x.mlir ]] || fail "a failed emit wrote its file"

# Values do not depend on the thread count: a step at the 25M bench model's
# widths (2 layers, 17M parameters) with bf16 activations, whose weight
# gradients x^T dy oneDNN's AMX kernels would split between threads, bit for
# bit on 1 and 2 threads, in both modes.
cat >threads.toml <<'TOML'
name = "threads"
description = "the 25M bench model at 2 layers, for the thread-count check"
sources = ["tests/model_test.sh"]

[architecture]
layers = 2
d_model = 512
heads = 8
kv_heads = 8
head_dim = 64
d_ff = 2048
vocab = 8192
mlp = "swiglu"
norm = "rmsnorm"
bias = false
tied_embeddings = false
position_embeddings = 0
max_seq = 256
TOML
"$tpusim" model --file threads.toml --emit threads.mlir --batch 4 --seq 256 --dtype bf16 \
  >/dev/null 2>&1 || fail "threads: emit"
for numerics in reference tpu; do
  for t in 1 2; do
    OMP_NUM_THREADS=$t "$tpusim" run threads.mlir --random-inputs --numerics "$numerics" \
      --output-dir "threads_${numerics}_$t" >/dev/null 2>&1 || fail "threads: run $numerics on $t"
  done
  diff -rq "threads_${numerics}_1" "threads_${numerics}_2" >/dev/null ||
    fail "threads: $numerics values differ between 1 and 2 threads"
done

if [[ $failures -gt 0 ]]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "model tests passed"

#!/usr/bin/env bash
# End-to-end tests of SPMD partitioning: each example of examples/sharding,
# a global program as JAX lowers it, runs on a v5e-8 slice partitioned and
# gives the values of the same program run whole on one chip; the report
# names the collectives the pattern needs; --dump-dir shows the per-device
# program; bad shardings are one-line errors with their location.
#
# usage: spmd_test.sh TPUSIM EXAMPLES_DIR
set -uo pipefail
tpusim=$1
examples=$2/sharding
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# check_example NAME COLLECTIVES RTOL
check_example() {
  local name=$1 collectives=$2 rtol=$3 program=$examples/$1.mlir
  "$tpusim" run "$program" --random-inputs --seed 5 --output-dir "$name.whole" \
    >"$name.whole.txt" 2>&1 || { fail "$name whole: $(tail -n 1 "$name.whole.txt")"; return; }
  "$tpusim" run "$program" --slice v5e-8 --random-inputs --seed 5 --output-dir "$name.split" \
    --dump-dir "$name.dump" >"$name.split.txt" 2>&1 ||
    { fail "$name partitioned: $(tail -n 1 "$name.split.txt")"; return; }
  grep -qx "note: SPMD partitioner: the global program split over 8 devices; added $collectives" \
    "$name.split.txt" || fail "$name collectives: $(grep 'SPMD' "$name.split.txt")"
  grep -q 'tpusim.spmd_partitioned' "$name.dump/00-input.mlir" ||
    fail "$name: the dump does not start from the partitioned program"
  $py - "$name" "$rtol" <<'PY' || fail "$name: partitioned values differ from the whole run"
import glob, sys
import numpy as np
name, rtol = sys.argv[1], float(sys.argv[2])
files = sorted(glob.glob(name + ".whole/*.npy"))
assert files, "no results"
for f in files:
    a = np.load(f).astype(np.float64)
    b = np.load(f.replace(".whole/", ".split/")).astype(np.float64)
    assert a.shape == b.shape, (f, a.shape, b.shape)
    scale = max(np.abs(a).max(), 1e-30)
    assert np.abs(a - b).max() <= rtol * scale, (f, np.abs(a - b).max(), scale)
PY
}

# Split f32 sums of 32k terms differ from whole ones by reassociation alone.
check_example data_parallel "3 all_reduce" 1e-4
check_example fsdp "2 all_gather, 1 all_reduce, 2 reduce_scatter" 1e-4
# Each device rounds its bf16 partial sums, as XLA's program does; the
# second block's saturating tanh amplifies those last-bit differences.
check_example megatron "2 all_reduce" 0.1
check_example context_parallel_attention "2 all_gather" 1e-6
check_example expert_parallel_moe "2 all_to_all" 1e-6

# Every sharding form prints back as it reads, in convert's generic form.
for f in "$examples"/*.mlir; do
  name=$(basename "$f" .mlir)
  "$tpusim" convert "$f" >"$name.generic.mlir" 2>err.txt || { fail "convert $name: $(cat err.txt)"; continue; }
  "$tpusim" convert "$name.generic.mlir" >"$name.again.mlir" 2>err.txt || fail "reread $name: $(cat err.txt)"
  cmp -s "$name.generic.mlir" "$name.again.mlir" || fail "$name does not print back stably"
done

# Elementwise ops and layout changes need no communication: bit-identical.
cmp -s context_parallel_attention.whole/result0.npy context_parallel_attention.split/result0.npy ||
  fail "attention: values are not bit-identical, though no reduction is split"

# The dumped per-device program is an ordinary one: as XLA HLO it runs alike.
"$tpusim" convert fsdp.dump/00-input.mlir --to hlo >fsdp.hlo 2>err.txt || fail "convert: $(cat err.txt)"
head -n 1 fsdp.hlo | grep -q '^HloModule jit_step, is_scheduled=true,' ||
  fail "the partitioned program's HLO is not marked per device: $(head -c 100 fsdp.hlo)"
"$tpusim" run fsdp.hlo --slice v5e-8 --random-inputs --seed 5 --output-dir fsdp.hlo_out >/dev/null 2>&1 ||
  fail "the partitioned program as HLO does not run"
for i in 0 1 2; do
  cmp -s "fsdp.split/result$i.npy" "fsdp.hlo_out/result$i.npy" || fail "HLO of the partition: result$i differs"
done

# Timing alone, and the MoE's all-to-alls on the ICI.
"$tpusim" run "$examples/expert_parallel_moe.mlir" --slice v5e-8 --timing-only >moe.txt 2>&1 ||
  fail "moe timing: $(tail -n 1 moe.txt)"
grep -q 'stablehlo.all_to_all' moe.txt || fail "moe: no all_to_all among the costliest ops"

# Bad shardings: one line with the location, exit 2, nothing written.
sed 's/{devices=\[8,1\]<=\[8\]}"},$/{devices=[4,1]<=[4]}"},/' "$examples/data_parallel.mlir" >four.mlir
"$tpusim" run four.mlir --slice v5e-8 --random-inputs --output-dir bad_out >out.txt 2>err.txt
[[ $? == 2 ]] || fail "tile count: exit status"
grep -q 'four.mlir:9:3: .*spans 4 devices, the program 8' err.txt || fail "tile count: $(cat err.txt)"
[[ $(wc -l <err.txt) == 1 ]] || fail "tile count: more than one line"
[[ ! -e bad_out ]] || fail "tile count: results written"
sed 's/"fsdp"}, {}\]>},$/"fsdp"}, {"fsdp"}]>},/' "$examples/fsdp.mlir" | head -c 100000 >twice.mlir
"$tpusim" run twice.mlir --slice v5e-8 --random-inputs --output-dir bad_out >out.txt 2>err.txt
[[ $? == 2 ]] || fail "axis used twice: exit status"
grep -q 'twice.mlir:12:3: .*used twice' err.txt || fail "axis used twice: $(cat err.txt)"

# A global program in XLA HLO (as jit(...).lower().compiler_ir("hlo") gives
# it) is partitioned alike: the constraint moves the split in an all-to-all.
cat >global.hlo <<'HLO'
HloModule jit_f, num_partitions=4

ENTRY main {
  x = f32[8,16] parameter(0), sharding={devices=[4,1]<=[4]}
  w = f32[16,4] parameter(1), sharding={replicated}
  d = f32[8,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c = f32[8,4] custom-call(d), custom_call_target="Sharding", sharding={devices=[1,4]<=[4]}
  ROOT t = f32[8,4] tanh(c), sharding={devices=[1,4]<=[4]}
}
HLO
"$tpusim" run global.hlo --random-inputs --output-dir hlo.whole >/dev/null 2>&1 || fail "global HLO whole"
"$tpusim" run global.hlo --slice v5e-4 --random-inputs --output-dir hlo.split >hlo.txt 2>&1 ||
  fail "global HLO partitioned: $(tail -n 1 hlo.txt)"
grep -q 'split over 4 devices; added 1 all_to_all$' hlo.txt || fail "global HLO: $(grep SPMD hlo.txt)"
cmp -s hlo.whole/result0.npy hlo.split/result0.npy || fail "global HLO: values differ"

# --mesh and --shard split a program that says nothing of shardings.
cat >plain.mlir <<'MLIR'
func.func @main(%x: tensor<64x256xf32>, %w1: tensor<256x1024xf32>, %w2: tensor<1024x256xf32>) -> tensor<64x256xf32> {
  %h = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<64x256xf32>, tensor<256x1024xf32>) -> tensor<64x1024xf32>
  %a = stablehlo.tanh %h : tensor<64x1024xf32>
  %y = stablehlo.dot_general %a, %w2, contracting_dims = [1] x [0] : (tensor<64x1024xf32>, tensor<1024x256xf32>) -> tensor<64x256xf32>
  return %y : tensor<64x256xf32>
}
MLIR
"$tpusim" run plain.mlir --random-inputs --output-dir plain.whole >/dev/null 2>&1 || fail "plain whole run"
"$tpusim" run plain.mlir --slice v5e-8 --mesh data=2,model=4 --shard x=data,_ --shard w1=_,model \
  --shard arg2=model,_ --shard result0=data,_ --random-inputs --output-dir plain.split >plain.txt 2>&1 ||
  fail "plain with --mesh/--shard: $(tail -n 1 plain.txt)"
grep -q 'split over 8 devices; added 1 all_reduce$' plain.txt || fail "flags: $(grep SPMD plain.txt)"
$py - <<'PY' || fail "--mesh/--shard values differ from the whole run"
import numpy as np
a, b = np.load("plain.whole/result0.npy"), np.load("plain.split/result0.npy")
assert np.abs(a - b).max() <= 1e-5 * np.abs(a).max(), np.abs(a - b).max()
PY
# Uneven shards: 6 rows and 10 columns over a 4 x 2 mesh; the device
# arguments are padded tiles, the results put back together without the
# padding, the same values as the whole run.
cat >uneven.mlir <<'MLIR'
func.func @main(%x: tensor<6x10xf32>, %w: tensor<10x3xf32>) -> (tensor<6x3xf32>, tensor<6x10xf32>) {
  %y = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<6x10xf32>, tensor<10x3xf32>) -> tensor<6x3xf32>
  %e = stablehlo.exponential %x : tensor<6x10xf32>
  return %y, %e : tensor<6x3xf32>, tensor<6x10xf32>
}
MLIR
"$tpusim" run uneven.mlir --random-inputs --output-dir uneven.whole >/dev/null 2>&1 || fail "uneven whole run"
"$tpusim" run uneven.mlir --slice v5e-8 --mesh rows=4,cols=2 --shard x=rows,cols --shard w=cols,_ \
  --shard result0=rows,_ --shard result1=rows,cols --random-inputs --output-dir uneven.split \
  --dump-dir uneven.dump >uneven.txt 2>&1 || fail "uneven shards: $(tail -n 1 uneven.txt)"
grep -q 'tpusim.global_shape = array<i64: 6, 10>' uneven.dump/00-input.mlir ||
  fail "uneven shards: the dump does not give the padded argument's global shape"
$py - <<'PY' || fail "uneven shards: values differ from the whole run"
import numpy as np
for i in (0, 1):
    a, b = np.load(f"uneven.whole/result{i}.npy"), np.load(f"uneven.split/result{i}.npy")
    assert a.shape == b.shape, (i, a.shape, b.shape)
    assert np.abs(a - b).max() <= 1e-5 * np.abs(a).max(), (i, np.abs(a - b).max())
PY

# bad_flag NAME MESSAGE FLAGS...: exit 2, one line naming the problem.
bad_flag() {
  local name=$1 message=$2; shift 2
  "$tpusim" run plain.mlir --slice v5e-8 "$@" --random-inputs --output-dir flag_out >out.txt 2>err.txt
  [[ $? == 2 ]] || fail "$name: exit status"
  grep -q -- "$message" err.txt || fail "$name: $(cat err.txt)"
  [[ $(wc -l <err.txt) == 1 ]] || fail "$name: more than one line"
}
bad_flag "mesh size" "--mesh data=0: expected name=size" --mesh data=0
bad_flag "shard without mesh" "--shard names mesh axes: give the mesh with --mesh" --shard x=data,_
bad_flag "unknown axis" '--shard x=model,_: .*axis "model"' --mesh data=8 --shard x=model,_
bad_flag "rank" "--shard x=data: .*1 dimension shardings for a rank-2 value" --mesh data=8 --shard x=data
bad_flag "unknown argument" "no argument or result 'y'" --mesh data=8 --shard y=data,_
"$tpusim" run "$examples/fsdp.mlir" --slice v5e-8 --mesh data=8 --timing-only >out.txt 2>err.txt
[[ $? == 2 ]] || fail "mesh of the program: exit status"
grep -q 'defines its own mesh' err.txt || fail "mesh of the program: $(cat err.txt)"
[[ ! -e flag_out ]] || fail "bad flags wrote results"

if [[ $failures -gt 0 ]]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "spmd tests passed"

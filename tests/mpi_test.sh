#!/usr/bin/env bash
# `mpirun -np K tpusim run ... --slice`: the slice's devices spread over K
# processes give the same values, timing and files as one process; a failure
# on one process ends the job with one message.
#
# usage: mpi_test.sh TPUSIM EXAMPLES_DIR
set -uo pipefail
tpusim=$1
examples=$2
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# CI runs as root, which mpirun refuses unless told this twice.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Processes on one machine talk through shared memory, and a container may
# forbid the cross-memory-attach that Open MPI tries first.
export OMPI_MCA_btl_vader_single_copy_mechanism=none
# In the sanitizer build, leak checking is off under mpirun: Open MPI keeps
# allocations past MPI_Finalize in plugins it has unloaded by then, which
# LeakSanitizer can neither name nor suppress. Address and UB checks stay on;
# tpusim's own code is leak-checked by the single-process tests.
mpi() {
  local np=$1; shift
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    timeout 120 mpirun --oversubscribe -np "$np" "$@"
}

$py - <<'PY'
import numpy as np
r = np.random.default_rng(1)
np.save("x.npy", r.standard_normal((512, 1024)).astype(np.float32))
np.save("tx.npy", r.standard_normal((128, 1024)).astype(np.float32))
np.save("w1.npy", (r.standard_normal((1024, 4096)) / 32).astype(np.float32))
np.save("w2.npy", (r.standard_normal((4096, 1024)) / 64).astype(np.float32))
x = np.load("x.npy")
for d in range(8):
    np.save(f"x.device{d}.npy", x[64 * d:64 * (d + 1)])
PY

# same_run NAME NP ARGS...: one process and NP processes print the same
# report (but for the note that says how many processes ran) and write the
# same files.
same_run() {
  local name=$1 np=$2; shift 2
  "$tpusim" run "$@" --no-cache --output-dir "one_$name" --report-json "one_$name.json" \
    --trace "one_$name.trace" >"one_$name.txt" 2>&1 ||
    fail "$name: one process: $(tail -n 2 "one_$name.txt")"
  mpi "$np" "$tpusim" run "$@" --no-cache --output-dir "many_$name" \
    --report-json "many_$name.json" --trace "many_$name.trace" >"many_$name.txt" 2>"many_$name.err" ||
    fail "$name: $np processes: $(tail -n 2 "many_$name.err")"
  [[ -s "many_$name.err" ]] && fail "$name: $np processes wrote to stderr: $(head -n 3 "many_$name.err")"
  diff <(sed -e "s/one_$name/DIR/; /devices ran over/d; /^compile: /d" "one_$name.txt") \
       <(sed -e "s/many_$name/DIR/; /devices ran over/d; /^compile: /d" "many_$name.txt") \
    >/dev/null || fail "$name: reports differ: $(diff "one_$name.txt" "many_$name.txt" | head -n 6)"
  grep -q "devices ran over $np processes" "many_$name.txt" || fail "$name: no note of the processes"
  [[ $(ls "one_$name" 2>/dev/null) == $(ls "many_$name" 2>/dev/null) ]] ||
    fail "$name: different files: $(ls "one_$name") vs $(ls "many_$name")"
  cmp -s "one_$name.trace" "many_$name.trace" || fail "$name: traces differ"
  for f in "one_$name"/*; do
    cmp -s "$f" "many_$name/${f#one_$name/}" || fail "$name: $f differs"
  done
}

dp=$examples/data_parallel_grads.mlir
tp=$examples/tensor_parallel_mlp.mlir
same_run dp2 2 "$dp" --slice v5e-8 --input x.npy
same_run tp2 2 "$tp" --slice v5e-8 --input tx.npy --input w1.npy --input w2.npy
# Three processes split 8 devices unevenly (2, 3, 3).
same_run tp3 3 "$tp" --slice v5e-8 --random-inputs --seed 5
same_run hlo2 2 "$examples/data_parallel_grads.hlo" --slice v5e-8 --input x.npy
# Each process reads its own devices' files.
same_run files3 3 "$dp" --slice v5e-8 --input 'x.device{device}.npy'
cmp -s one_dp2/result0.npy many_files3/result0.npy || fail "per-device files: other values"
$py - <<'PY' || fail "JSON reports differ"
import json
for name in ("dp2", "tp2", "tp3"):
    one, many = json.load(open(f"one_{name}.json")), json.load(open(f"many_{name}.json"))
    assert one["total_seconds"] == many["total_seconds"], name
    assert one["slice"] == many["slice"], name
PY
# send/recv with source_target_pairs around a ring of the 8 devices: device
# d receives d - 1's partition id, across processes too.
cat >ring.mlir <<'MLIR'
module @ring attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func @main() -> tensor<4xui32> {
    %p = stablehlo.partition_id : tensor<ui32>
    %v = stablehlo.broadcast_in_dim %p, dims = [] : (tensor<ui32>) -> tensor<4xui32>
    %t = stablehlo.after_all : !stablehlo.token
    %s = "stablehlo.send"(%v, %t) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, is_host_transfer = false, source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 4], [4, 5], [5, 6], [6, 7], [7, 0]]> : tensor<8x2xi64>} : (tensor<4xui32>, !stablehlo.token) -> !stablehlo.token
    %r, %u = "stablehlo.recv"(%s) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, is_host_transfer = false, source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 4], [4, 5], [5, 6], [6, 7], [7, 0]]> : tensor<8x2xi64>} : (!stablehlo.token) -> (tensor<4xui32>, !stablehlo.token)
    return %r : tensor<4xui32>
  }
}
MLIR
same_run ring3 3 ring.mlir --slice v5e-8
$py - <<'PY' || fail "send/recv ring values"
import numpy as np
for d in range(8):
    got = np.load(f"many_ring3/result0.device{d}.npy")
    assert (got == (d - 1) % 8).all(), (d, got)
PY
mpi 2 "$tpusim" run "$dp" --slice v5p-64 --timing-only --no-cache >tonly.txt 2>&1 ||
  fail "timing-only under mpirun: $(tail -n 2 tonly.txt)"
[[ $(grep -c '^device: ' tonly.txt) == 1 ]] || fail "timing-only: not one report: $(cat tonly.txt)"

# Bad input stops every process; one message names it, and nothing is written.
mpi 2 "$tpusim" run "$dp" --slice v5e-8 --input missing.npy --output-dir bad_out --no-cache \
  >bad.txt 2>bad.err
code=$?
[[ $code == 2 ]] || fail "missing input: exit $code, want 2"
[[ $(grep -c '^tpusim: .*missing.npy' bad.err) == 1 ]] || fail "missing input: $(cat bad.err)"
[[ ! -e bad_out ]] || fail "missing input: wrote results"

# Device 5 (on the second process) fails while the others wait for it in an
# all_reduce: its failure reaches them, and the job ends with its message.
cat >fails_on_5.mlir <<'MLIR'
module @m attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %p = stablehlo.partition_id : tensor<ui32>
    %c5 = stablehlo.constant dense<5> : tensor<ui32>
    %is5 = stablehlo.compare EQ, %p, %c5 : (tensor<ui32>, tensor<ui32>) -> tensor<i1>
    %y = "stablehlo.if"(%is5) ({
      %z = stablehlo.custom_call @no_such_kernel(%x) : (tensor<4xf32>) -> tensor<4xf32>
      stablehlo.return %z : tensor<4xf32>
    }, {
      stablehlo.return %x : tensor<4xf32>
    }) : (tensor<i1>) -> tensor<4xf32>
    %s = "stablehlo.all_reduce"(%y) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<1x8xi64>, use_global_device_ids}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %t = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %t : tensor<f32>
    }) : (tensor<4xf32>) -> tensor<4xf32>
    return %s : tensor<4xf32>
  }
}
MLIR
mpi 2 "$tpusim" run fails_on_5.mlir --slice v5e-8 \
  --random-inputs --output-dir fail_out --no-cache >fail.txt 2>fail.err
code=$?
[[ $code == 3 ]] || fail "failing device: exit $code, want 3: $(cat fail.err)"
[[ $(grep -c "^tpusim: .*process (0, 5).*no_such_kernel" fail.err) == 1 ]] ||
  fail "failing device: $(cat fail.err)"
[[ ! -e fail_out ]] || fail "failing device: wrote results"

# A global program is partitioned alike by every process: FSDP over 2
# processes gives one process's bits.
fsdp=$examples/sharding/fsdp.mlir
"$tpusim" run "$fsdp" --slice v5e-8 --random-inputs --seed 5 --output-dir fsdp1 >/dev/null 2>&1 ||
  fail "fsdp on one process"
mpi 2 "$tpusim" run "$fsdp" --slice v5e-8 --random-inputs --seed 5 --output-dir fsdp2 \
  >fsdp2.txt 2>&1 || fail "fsdp over 2 processes: $(tail -n 1 fsdp2.txt)"
grep -q 'SPMD partitioner: the global program split over 8 devices' fsdp2.txt ||
  fail "fsdp over 2 processes: not partitioned"
for i in 0 1 2; do
  cmp -s "fsdp1/result$i.npy" "fsdp2/result$i.npy" || fail "fsdp over 2 processes: result$i differs"
done

if [[ $failures -gt 0 ]]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "mpi: all passed"

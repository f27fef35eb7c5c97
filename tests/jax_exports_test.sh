#!/usr/bin/env bash
# Programs in the exact form JAX exports them for TPU (tests/jax_exports):
# each runs with `tpusim run` and gives numpy's values, or fails with the
# documented one-line error; each is timed with --timing-only.
#
# usage: jax_exports_test.sh TPUSIM PROGRAMS_DIR
set -uo pipefail
tpusim=$1
dir=$2
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# run_ok NAME ARGS...: runs tpusim, which must succeed.
run_ok() {
  local name=$1; shift
  "$tpusim" run "$@" >"$name.out" 2>"$name.err" || fail "$name: $(head -c 400 "$name.err")"
}

# run_fails NAME CODE PATTERN ARGS...: tpusim must exit CODE with one
# 'tpusim: ' line on stderr (plus source and caret at most) matching PATTERN.
run_fails() {
  local name=$1 code=$2 pattern=$3; shift 3
  "$tpusim" run "$@" >"$name.out" 2>"$name.err"
  local got=$?
  [[ $got == "$code" ]] || fail "$name: exit $got, want $code ($(head -c 300 "$name.err"))"
  head -n 1 "$name.err" | grep -q "^tpusim: .*$pattern" ||
    fail "$name: stderr lacks '$pattern': $(head -c 300 "$name.err")"
  [[ $(wc -l <"$name.err") -le 3 ]] || fail "$name: stderr has more than 3 lines"
}

# timed NAME: the timing report of NAME.out has a total time.
timed() { grep -q '^  time ' "$1.out" || fail "$1: no timing report: $(head -c 300 "$1.out")"; }

$py - <<'PY'
import numpy as np
rng = np.random.default_rng(7)
np.save("x.npy", rng.standard_normal((64, 128), dtype=np.float32))
np.save("w1.npy", rng.standard_normal((128, 256), dtype=np.float32) / 8)
np.save("w2.npy", rng.standard_normal((256, 128), dtype=np.float32) / 8)
np.save("qy.npy", rng.standard_normal((16, 64), dtype=np.float32))
np.save("db.npy", rng.standard_normal((1024, 64), dtype=np.float32))
np.save("sx.npy", rng.standard_normal((16, 16), dtype=np.float32))
np.save("sb.npy", rng.standard_normal((16,), dtype=np.float32))
np.save("ox.npy", rng.standard_normal((512, 256), dtype=np.float32))
PY

# --- The sharded MLP (Shardy shardings, a sharding constraint, a private
# function, donation and locations): whole on one chip and partitioned over
# a v5e-8 slice, the same values as numpy's.
mlp=$dir/mlp_sharded.mlir
run_ok mlp_whole "$mlp" --numerics reference --input x.npy --input w1.npy --input w2.npy --output-dir mlp.whole
run_ok mlp_split "$mlp" --numerics reference --slice v5e-8 --input x.npy --input w1.npy --input w2.npy \
  --output-dir mlp.split
grep -q 'SPMD partitioner: the global program split over 8 devices' mlp_split.out ||
  fail "mlp partitioned: no partitioning note: $(grep note mlp_split.out)"
$py - <<'PY' || fail "mlp: values differ from numpy"
import numpy as np
x, w1, w2 = (np.load(f).astype(np.float64) for f in ("x.npy", "w1.npy", "w2.npy"))
want = np.maximum(x @ w1, 0) @ w2
for d in ("mlp.whole", "mlp.split"):
    got = np.load(d + "/result0.npy")
    assert got.shape == want.shape, (d, got.shape)
    assert np.abs(got - want).max() <= 1e-4 * np.abs(want).max(), (d, np.abs(got - want).max())
PY
run_ok mlp_timing "$mlp" --timing-only --slice v5e-8 && timed mlp_timing

# --- approx_max_k: the exact top 8 of each row, with its indices.
topk=$dir/approx_max_k.mlir
run_ok topk "$topk" --numerics reference --input qy.npy --input db.npy --output-dir topk
$py - <<'PY' || fail "approx_max_k: not the top 8"
import numpy as np
d = np.load("qy.npy").astype(np.float64) @ np.load("db.npy").astype(np.float64).T
v, i = np.load("topk/result0.npy"), np.load("topk/result1.npy")
assert v.shape == (16, 8) and i.shape == (16, 8) and i.dtype == np.int32
want = -np.sort(-d, axis=1)[:, :8]
assert np.allclose(v, want, rtol=1e-5, atol=1e-5), np.abs(v - want).max()
assert np.allclose(np.take_along_axis(d, i.astype(np.int64), axis=1), v, rtol=1e-5, atol=1e-5)
assert all(len(set(r)) == 8 for r in i)
PY
run_ok topk_timing "$topk" --timing-only && timed topk_timing
grep -q "priced as an approximate top-8" topk_timing.out || fail "approx_max_k: no pricing note"

# --- shard_map with a psum, in Shardy's manual_computation, on 8 devices.
smap=$dir/shard_map_psum.mlir
run_ok smap "$smap" --numerics reference --slice v5e-8 --input sx.npy --input sb.npy --output-dir smap
$py - <<'PY' || fail "shard_map: values differ from numpy"
import numpy as np
x, b = np.load("sx.npy").astype(np.float64), np.load("sb.npy").astype(np.float64)
col = x.reshape(4, 4, 16).sum(axis=0)  # psum over "data": the 4 row blocks
want = 2 * x + np.tile(col, (4, 1)) + b
got = np.load("smap/result0.npy")
assert np.abs(got - want).max() <= 1e-5, np.abs(got - want).max()
PY
run_ok smap_timing "$smap" --timing-only --slice v5e-8 && timed smap_timing

# --- Host offloading: the values pass through; the moves use the host link.
off=$dir/host_offload.mlir
run_ok offload "$off" --numerics reference --input ox.npy --output-dir off
$py - <<'PY' || fail "host offload: values differ from numpy"
import numpy as np
y = np.tanh(np.load("ox.npy").astype(np.float64))
z, saved = np.load("off/result0.npy"), np.load("off/result1.npy")
assert np.abs(z - 2 * y).max() <= 1e-5 and np.abs(saved - y).max() <= 1e-5
PY
run_ok offload_timing "$off" --timing-only --chip v6e && timed offload_timing
grep -qE 'host [0-9.]+ [mun]?s' offload_timing.out ||
  fail "host offload: no host link time: $(grep 'time by unit' offload_timing.out)"

# --- A Pallas kernel: running it is refused naming the kernel; its
# cost_estimate prices it; without one, timing is refused too.
pallas=$dir/pallas_matmul.mlir
run_fails pallas_run 3 "Pallas TPU kernel 'matmul_kernel': tpusim cannot run Mosaic kernels" \
  "$pallas" --random-inputs --output-dir pallas
run_ok pallas_timing "$pallas" --timing-only && timed pallas_timing
grep -q "from its cost_estimate (33554432 FLOP on the MXU" pallas_timing.out ||
  fail "pallas: not priced from its cost_estimate: $(grep -i pallas pallas_timing.out)"
sed 's/\\22cost_estimate\\22: {[^}]*}, //' "$pallas" >pallas_nocost.mlir
run_fails pallas_nocost 3 "'matmul_kernel' has no cost_estimate" pallas_nocost.mlir --timing-only

# --- A host callback: running it is refused naming it; timing prices the
# round trip.
cb=$dir/pure_callback.mlir
run_fails callback_run 3 "host callback 'host_sort'.*cannot call back into Python" \
  "$cb" --random-inputs --output-dir cb
run_ok callback_timing "$cb" --timing-only && timed callback_timing

# --- Shardy's round-trip form (2025 exports): read back into sdy, split
# over a 2-device mesh, numpy's values.
rt=$dir/shardy_round_trip.mlir
$py -c "import numpy as np; np.save('rx.npy', np.arange(32, dtype=np.float32).reshape(8, 4))"
run_ok round_trip "$rt" --numerics reference --chip v5e --topology 2x1 --input rx.npy \
  --output-dir rt
$py - <<'PY' || fail "shardy round trip: values differ from numpy"
import numpy as np
x = np.load("rx.npy")
s = np.concatenate([x[:4] + x[4:]] * 2)
assert np.array_equal(np.load("rt/result0.npy"), s * s)
assert np.array_equal(np.load("rt/result1.npy"), s)
PY

# --- GSPMD markers without a partition count: the two devices its
# shardings name.
gs=$dir/gspmd_no_partition_count.mlir
$py -c "import numpy as np; np.save('gx.npy', np.arange(8, dtype=np.float32).reshape(2, 4))"
run_ok gspmd_count "$gs" --numerics reference --chip v5e --topology 2x1 --input gx.npy \
  --output-dir gspmd
$py -c "import numpy as np; x = np.load('gx.npy'); assert np.array_equal(np.load('gspmd/result0.npy'), x[::-1])" ||
  fail "gspmd without a partition count: rows not swapped"

if [[ $failures -gt 0 ]]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "jax exports: all passed"

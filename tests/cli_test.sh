#!/usr/bin/env bash
# End-to-end tests of the tpusim CLI: `run` with .npy inputs and outputs,
# random inputs, exit statuses and messages for bad input, `check`, the
# compiler's flags and cache, and XLA HLO input.
# numpy (from /usr/bin/python3) makes and verifies the .npy files.
#
# usage: cli_test.sh TPUSIM EXAMPLES_DIR
set -uo pipefail
tpusim=$1
examples=$2
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# expect_exit CODE NAME CMD...: runs CMD, checks its exit status and that
# for input errors (2, 3) stderr is "tpusim: ..." (one line, plus a source
# line and caret at most).
expect_exit() {
  local want=$1 name=$2; shift 2
  "$@" >stdout.txt 2>stderr.txt
  local got=$?
  [[ $got == "$want" ]] || fail "$name: exit $got, want $want ($(head -c 300 stderr.txt))"
  if [[ $want -ge 2 ]]; then
    head -n 1 stderr.txt | grep -q '^tpusim: ' || fail "$name: stderr is not 'tpusim: ...'"
    [[ $(wc -l <stderr.txt) -le 3 ]] || fail "$name: stderr has more than 3 lines"
  fi
}

cat >add.mlir <<'MLIR'
func.func @main(%arg0: tensor<2x3xf32>, %arg1: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = stablehlo.subtract %arg0, %arg1 : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
MLIR
cat >bf16.mlir <<'MLIR'
func.func @main(%x: tensor<3xbf16>) -> (tensor<3xbf16>, tensor<i32>) {
  %c = stablehlo.constant dense<7> : tensor<i32>
  return %x, %c : tensor<3xbf16>, tensor<i32>
}
MLIR
printf 'func.func @main() -> tensor<f32> {\n  %%0 = stablehlo.constant dense<1.0> : tensor<f32\n' >malformed.mlir
cat >unknown.mlir <<'MLIR'
func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.no_such_op"(%arg0) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
MLIR
$py - <<'PY'
import numpy as np
np.save("a.npy", np.arange(6, dtype=np.float32).reshape(2, 3))
np.save("b.npy", np.full((2, 3), 0.5, dtype=np.float32))
np.save("wrong.npy", np.zeros((3, 2), dtype=np.float32))
np.save("x.npy", np.array([1.00390625, 2.5, -3.0], dtype=np.float32))
PY

# Positional inputs; result written as .npy and summarized on stdout.
expect_exit 0 "run positional" "$tpusim" run add.mlir --input a.npy --input b.npy --output-dir out1
grep -q '^result0: tensor<2x3xf32> min=-0.5 max=4.5 mean=2 -> out1/result0.npy$' stdout.txt ||
  fail "run positional: summary line: $(cat stdout.txt)"
$py -c 'import numpy as np, sys
r = np.load("out1/result0.npy")
sys.exit(0 if r.dtype == np.float32 and (r == np.arange(6).reshape(2, 3) - 0.5).all() else 1)' ||
  fail "run positional: wrong result0.npy"

# Named inputs in any order.
expect_exit 0 "run named" "$tpusim" run add.mlir --input arg1=a.npy --input arg0=b.npy --output-dir out2
$py -c 'import numpy as np, sys
sys.exit(0 if (np.load("out2/result0.npy") == 0.5 - np.arange(6).reshape(2, 3)).all() else 1)' ||
  fail "run named: wrong result0.npy"

# float32 inputs are rounded to bf16 (ties to even); bf16 results are written as float32.
expect_exit 0 "run bf16" "$tpusim" run bf16.mlir --input x.npy --output-dir out3
$py -c 'import numpy as np, sys
r = np.load("out3/result0.npy"); c = np.load("out3/result1.npy")
sys.exit(0 if r.dtype == np.float32 and list(r) == [1.0, 2.5, -3.0] and c.dtype == np.int32 and c == 7 else 1)' ||
  fail "run bf16: wrong results"
grep -q '^result1: tensor<i32> = ' stdout.txt || fail "run bf16: scalar summary: $(cat stdout.txt)"

# Random inputs are reproducible for a seed.
expect_exit 0 "random 1" "$tpusim" run add.mlir --random-inputs --seed 3 --output-dir r1
expect_exit 0 "random 2" "$tpusim" run add.mlir --random-inputs --seed 3 --output-dir r2
cmp -s r1/result0.npy r2/result0.npy || fail "random inputs differ for the same seed"

# Errors: one line on stderr, the documented exit status, no output files.
expect_exit 2 "malformed text" "$tpusim" run malformed.mlir --random-inputs --output-dir e1
expect_exit 3 "unknown op" "$tpusim" run unknown.mlir --random-inputs --output-dir e2
grep -q 'stablehlo.no_such_op' stderr.txt || fail "unknown op: message does not name the op"
expect_exit 2 "missing program" "$tpusim" run no_such_file.mlir --output-dir e3
expect_exit 2 "missing input file" "$tpusim" run add.mlir --input nope.npy --input b.npy --output-dir e4
expect_exit 2 "wrong input shape" "$tpusim" run add.mlir --input wrong.npy --input b.npy --output-dir e5
grep -q 'tensor<3x2xf32>' stderr.txt || fail "wrong input shape: message lacks the shapes"
expect_exit 2 "missing input" "$tpusim" run add.mlir --input a.npy --output-dir e6
expect_exit 2 "unknown input name" "$tpusim" run add.mlir --input zz=a.npy --output-dir e7
expect_exit 2 "too many inputs" "$tpusim" run add.mlir --input a.npy --input a.npy --input a.npy --output-dir e8
expect_exit 2 "unknown flag" "$tpusim" run add.mlir --bogus
expect_exit 2 "bad numerics" "$tpusim" run add.mlir --numerics fast
# A program whose values fit each device's HBM but not the host's memory
# (8 devices of a slice holding 32 GiB each, twice) is refused before any
# input is made, and says what it needs.
cat >huge.mlir <<'MLIR'
func.func @main(%x: tensor<65536x131072xf32>) -> tensor<65536x131072xf32> {
  %0 = stablehlo.negate %x : tensor<65536x131072xf32>
  return %0 : tensor<65536x131072xf32>
}
MLIR
expect_exit 2 "values past host memory" "$tpusim" run huge.mlir --slice v5p-16 --mesh data=8 \
  --random-inputs --output-dir e9
grep -q 'needs about 512 GiB of host memory (arguments 256 GiB, 8 devices)' stderr.txt ||
  fail "values past host memory: $(cat stderr.txt)"
"$tpusim" run add.mlir --random-inputs --output-dir r3 >stdout.txt
grep -q '^host memory: about 72 B for the values at their peak (arguments 48 B)$' stdout.txt ||
  fail "a values run does not state its host memory need"
for d in e1 e2 e3 e4 e5 e6 e7 e8 e9; do
  [[ -z $(ls -A "$d" 2>/dev/null) ]] || fail "$d: output files left after an error"
done

# The HTML report: a value run's and a timing-only run's page; a path that
# cannot be written is a one-line error.
expect_exit 0 "report html" "$tpusim" run add.mlir --random-inputs --output-dir h1 --report-html h1.html
head -n 1 h1.html | grep -q '^<!DOCTYPE html>' || fail "report html: $(head -c 200 h1.html)"
expect_exit 0 "report html timing" "$tpusim" run add.mlir --timing-only --report-html h2.html
grep -q '"schema":"tpusim.report/1"' h2.html || fail "report html timing: no report data"
expect_exit 2 "report html unwritable" "$tpusim" run add.mlir --timing-only --report-html no_dir/r.html
[[ ! -e no_dir ]] || fail "report html unwritable: no_dir was made"

expect_exit 0 "version" "$tpusim" --version
grep -q '^tpusim ' stdout.txt || fail "version: $(cat stdout.txt)"

# check: one line per case and a summary; exit 1 when a case fails.
cat >cases.mlir <<'MLIR'
func.func @good() {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  check.expect_eq_const %0, dense<[1, 2]> : tensor<2xi32>
  func.return
}

// -----

func.func @bad() {
  %0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  check.expect_almost_eq_const %0, dense<[1.0, 2.1]> : tensor<2xf32>
  func.return
}
MLIR
expect_exit 1 "check failing" "$tpusim" check cases.mlir
diff <(sed -E 's/(FAIL [^ ]+ bad) .*/\1/' stdout.txt) - <<'OUT' || fail "check output"
PASS cases.mlir:1 good
FAIL cases.mlir:9 bad
1 passed, 1 failed
OUT
grep -q 'FAIL cases.mlir:9 bad .*1 of 2 elements differ' stdout.txt || fail "check: failure reason"
head -n 5 cases.mlir >good.mlir
expect_exit 2 "check missing file" "$tpusim" check good.mlir no_such_file.mlir
expect_exit 0 "check passing" "$tpusim" check good.mlir
[[ $(tail -n 1 stdout.txt) == "1 passed, 0 failed" ]] || fail "check passing: $(cat stdout.txt)"

# --- The compiler: pass selection, dumps, fusion, the cache, memory planning.
mlp=$examples/mlp_step.mlir
expect_exit 0 "passes list" "$tpusim" run --passes list
grep -q '^fusion  *fuse' stdout.txt || fail "passes list: $(cat stdout.txt)"
expect_exit 2 "unknown pass" "$tpusim" run "$mlp" --timing-only --passes inline,nope
grep -q "unknown pass 'nope'" stderr.txt || fail "unknown pass: $(cat stderr.txt)"
expect_exit 0 "dump dir" "$tpusim" run "$mlp" --timing-only --dump-dir dump
[[ $(ls dump | tr '\n' ' ') == "00-input.mlir 01-inline.mlir 02-canonicalize.mlir 03-constant-fold.mlir 04-dce.mlir 05-layout-assignment.mlir 06-fusion.mlir 07-memory-scheduling.mlir 08-buffer-assignment.mlir " ]] ||
  fail "dump dir: $(ls dump | tr '\n' ' ')"
grep -q '"tpusim.fusion"' dump/06-fusion.mlir || fail "dump: no fusion after the fusion pass"
grep -q '"tpusim.fusion"' dump/05-layout-assignment.mlir && fail "dump: fusion before its pass"
expect_exit 0 "dumped program runs" "$tpusim" run dump/08-buffer-assignment.mlir --timing-only
expect_exit 0 "only some passes" "$tpusim" run "$mlp" --timing-only --passes dce,inline --dump-dir some
[[ $(ls some | tr '\n' ' ') == "00-input.mlir 01-inline.mlir 02-dce.mlir " ]] || fail "passes order: $(ls some)"

"$tpusim" run "$mlp" --timing-only --report-json fused.json >fused.txt || fail "fused run"
"$tpusim" run "$mlp" --timing-only --no-fusion --report-json unfused.json >unfused.txt ||
  fail "unfused run"
grep -q '^fused kernels' fused.txt || fail "no fused kernels listed: $(cat fused.txt)"
grep -q '^fused kernels' unfused.txt && fail "--no-fusion still fuses"
$py - fused.json unfused.json <<'PY' || fail "fusion does not pay in the JSON reports"
import json, sys
f, u = (json.load(open(p)) for p in sys.argv[1:])
assert f["fusions"] and not u["fusions"], "kernels"
assert f["total_seconds"] < u["total_seconds"], (f["total_seconds"], u["total_seconds"])
assert f["hbm_bytes"] < u["hbm_bytes"]
assert f["memory"]["peak_bytes"] <= f["memory"]["sum_of_buffers"]
assert "fusion" not in u["compile"]["passes"] and "fusion" in f["compile"]["passes"]
PY

expect_exit 0 "cache miss" "$tpusim" run "$mlp" --timing-only --cache-dir cache2
grep -q 'compile: .*(cache miss)' stdout.txt || fail "first run: $(grep compile: stdout.txt)"
expect_exit 0 "cache hit" "$tpusim" run "$mlp" --timing-only --cache-dir cache2
grep -q 'compile: .*(cache disk hit)' stdout.txt || fail "second run: $(grep compile: stdout.txt)"
grep -q 'mlp_step.mlir:7:5' stdout.txt || fail "cache hit lost the source locations"
expect_exit 0 "no cache" "$tpusim" run "$mlp" --timing-only --no-cache
grep -q 'compile: .*(cache off)' stdout.txt || fail "--no-cache: $(grep compile: stdout.txt)"
[[ -d cache/tpusim ]] || fail "default cache is not under XDG_CACHE_HOME"

cat >small_hbm.toml <<'TOML'
base = "v5e"
[memory]
hbm_bytes = 50000
TOML
expect_exit 2 "does not fit" "$tpusim" run "$mlp" --timing-only --chip-file small_hbm.toml
grep -q 'RESOURCE_EXHAUSTED: @main needs [0-9.]* KiB of HBM but .* has 48.8 KiB' stderr.txt || fail "out of HBM: $(cat stderr.txt)"
grep -q 'largest buffers live at the peak' stderr.txt || fail "out of HBM: no buffers named"

# --- MXU cycle models from chip files: one 128x128 output-stationary array.
cat >os.toml <<'TOML'
base = "v5e"
[mxu]
per_core = 1
dataflow = "output_stationary"
double_buffered = false
TOML
{ cat os.toml; echo 'cycle_model = "scale_sim"'; } >scale_sim.toml
sed 's/double_buffered = false/double_buffered = true/' scale_sim.toml >scale_sim_db.toml
cat >mm1024.mlir <<'MLIR'
func.func @main(%a: tensor<1024x1024xbf16>, %b: tensor<1024x1024xbf16>) -> tensor<1024x1024xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<1024x1024xbf16>, tensor<1024x1024xbf16>) -> tensor<1024x1024xf32>
  return %0 : tensor<1024x1024xf32>
}
MLIR
for model in os scale_sim; do
  expect_exit 0 "$model cycles" "$tpusim" run mm1024.mlir --chip-file $model.toml --timing-only \
    --no-fusion --no-cache --report-json $model.json
done
$py - <<'PY' || fail "MXU cycle models"
import json
cycles = lambda f: [o["mxu_cycles"] for o in json.load(open(f))["ops"] if "dot" in o["op"]][0]
# SCALE-Sim's own count for this GEMM; the register machine adds R = 128 drain
# cycles to each of the 64 folds and counts the last cycle.
assert cycles("scale_sim.json") == 81791, cycles("scale_sim.json")
assert cycles("os.json") == 81791 + 64 * 128 + 1, cycles("os.json")
assert json.load(open("scale_sim.json"))["chip"]["mxu"]["cycle_model"] == "scale_sim"
PY
expect_exit 2 "scale_sim with double buffering" "$tpusim" run mm1024.mlir --timing-only \
  --chip-file scale_sim_db.toml
grep -q 'double_buffered = false' stderr.txt || fail "scale_sim + double_buffered: $(cat stderr.txt)"

# --- Pod slices: collectives priced on the torus.
expect_exit 0 "slices" "$tpusim" slices
grep -qE '^v5p-128 +64 +64 4x4x4 +wraps x,y,z +16$' stdout.txt || fail "slices: $(grep v5p-128 stdout.txt)"
grep -q 'twisted tori.*are not modelled' stdout.txt || fail "slices: no word on twisted tori"
expect_exit 3 "twisted torus" "$tpusim" run "$examples/data_parallel_grads.mlir" --chip v4 \
  --topology 4x4x8_twisted --timing-only
grep -q "twisted tori ('4x4x8_twisted') are not modelled; use '4x4x8'" stderr.txt ||
  fail "twisted: $(cat stderr.txt)"
dp=$examples/data_parallel_grads.mlir
expect_exit 0 "slice run" "$tpusim" run "$dp" --slice v5e-8 --timing-only --no-cache \
  --report-json slice.json --trace slice_trace.json
grep -q '^slice: v5litepod-8: 8 v5e chips in a 2x4 torus' stdout.txt || fail "slice line: $(cat stdout.txt)"
expect_exit 0 "topology run" "$tpusim" run "$dp" --chip v5e --topology 2x4 --timing-only \
  --no-cache --report-json topology.json
$py - <<'PY' || fail "slice report"
import json
r = json.load(open("slice.json"))
ar = [o for o in r["ops"] if o["op"] == "stablehlo.all_reduce"][0]
assert ar["priced"] and ar["bound"] == "ici", ar
assert r["time_by_unit"]["ici"] > 0
assert r["slice"]["ici_links"] == 20 and r["slice"]["ici_bytes"] > 0, r["slice"]
trace = json.load(open("slice_trace.json"))["traceEvents"]
tracks = {(e["pid"], e["tid"]): e["args"]["name"] for e in trace if e["name"] == "thread_name"}
busy = {tracks[e["pid"], e["tid"]] for e in trace if e["ph"] == "X" and "all_reduce" in e["name"]}
assert {"collectives", "ici x", "ici y", "ici"} <= busy, busy
assert json.load(open("topology.json"))["total_seconds"] == r["total_seconds"]
PY
# --latency-hiding moves a matmul between an all_reduce and its first use.
cat >lhs.mlir <<'MLIR'
module attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func @main(%x: tensor<1024x1024xf32>, %w: tensor<2048x2048xbf16>) -> (tensor<1024x1024xf32>, tensor<2048x2048xf32>) {
    %s = "stablehlo.all_reduce"(%x) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<1x8xi64>, use_global_device_ids}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %t = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %t : tensor<f32>
    }) : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
    %e = stablehlo.exponential %s : tensor<1024x1024xf32>
    %m = stablehlo.dot_general %w, %w, contracting_dims = [1] x [0] : (tensor<2048x2048xbf16>, tensor<2048x2048xbf16>) -> tensor<2048x2048xf32>
    return %e, %m : tensor<1024x1024xf32>, tensor<2048x2048xf32>
  }
}
MLIR
expect_exit 0 "in program order" "$tpusim" run lhs.mlir --slice v5e-8 --timing-only --no-cache
grep -q '(0.0% hidden by compute)' stdout.txt || fail "in order: $(grep communication stdout.txt)"
expect_exit 0 "latency hiding" "$tpusim" run lhs.mlir --slice v5e-8 --timing-only --no-cache \
  --latency-hiding
grep -q 'latency-hiding [0-9.]* .s, buffer-assignment' stdout.txt || fail "no latency-hiding pass"
grep -qE '\(([7-9][0-9]|100).[0-9]% hidden by compute\)' stdout.txt ||
  fail "latency hiding hid too little: $(grep communication stdout.txt)"
# A per-device program needs its devices: one chip alone is refused, not
# timed with its collectives unpriced.
expect_exit 2 "no slice" "$tpusim" run "$dp" --timing-only --no-cache
grep -q 'pass --slice with 8 devices' stderr.txt || fail "no slice: $(cat stderr.txt)"
expect_exit 2 "slice too small" "$tpusim" run "$dp" --slice v5e-4 --timing-only
grep -q 'has 4 devices' stderr.txt || fail "too small: $(cat stderr.txt)"
expect_exit 2 "unknown slice" "$tpusim" run "$dp" --slice v5p-100 --timing-only
grep -q 'v5p-128' stderr.txt || fail "unknown slice: $(cat stderr.txt)"
expect_exit 2 "bad topology" "$tpusim" run "$dp" --chip v5p --topology 4x4 --timing-only
sed 's/\[\[0, 1, 2, 3, 4, 5, 6, 7\]\]/[[0, 1, 2, 3, 4, 5, 6, 9]]/' "$dp" >bad_group.mlir
expect_exit 2 "group outside the grid" "$tpusim" run bad_group.mlir --slice v5e-8 \
  --random-inputs --output-dir bad_group_out
grep -q 'bad_group.mlir:12:5: .*group id 9 is out of range' stderr.txt || fail "bad group: $(cat stderr.txt)"
[[ ! -e bad_group_out ]] || fail "bad group wrote results"

# Values on 8 devices equal the single-device program's, within f32
# reassociation: data parallel (a batch-sharded x^T x summed by all_reduce)
# against numpy, tensor parallel (column- then row-split weights) against
# the unsplit program on one chip.
$py - <<'PY'
import numpy as np
r = np.random.default_rng(1)
np.save("x.npy", r.standard_normal((512, 1024)).astype(np.float32))
np.save("tx.npy", r.standard_normal((128, 1024)).astype(np.float32))
np.save("w1.npy", (r.standard_normal((1024, 4096)) / 32).astype(np.float32))
np.save("w2.npy", (r.standard_normal((4096, 1024)) / 64).astype(np.float32))
PY
expect_exit 0 "data parallel values" "$tpusim" run "$dp" --slice v5e-8 --input x.npy \
  --output-dir dp_out --no-cache
# Each device's tile from a file of its own: the same bits.
$py -c "
import numpy as np
x = np.load('x.npy')
for d in range(8):
    np.save(f'x.device{d}.npy', x[64 * d:64 * (d + 1)])
    np.save(f'half.device{d}.npy', x[32 * d:32 * (d + 1)])"
expect_exit 0 "per-device inputs" "$tpusim" run "$dp" --slice v5e-8 --input 'x.device{device}.npy' \
  --output-dir dp_per_device --no-cache
cmp -s dp_out/result0.npy dp_per_device/result0.npy || fail "per-device inputs give other values"
expect_exit 2 "per-device input of the wrong shape" "$tpusim" run "$dp" --slice v5e-8 \
  --input 'x=half.device{device}.npy' --output-dir dp_bad_device --no-cache
grep -q "^tpusim: input %x (half.device0.npy): given tensor<32x1024xf32> but the program takes tensor<64x1024xbf16>$" stderr.txt ||
  fail "per-device input error: $(cat stderr.txt)"
[[ ! -e dp_bad_device ]] || fail "a bad per-device input wrote results"
# The same step as XLA dumps it (async all-reduce, iota groups): same bits, same time.
expect_exit 0 "data parallel HLO" "$tpusim" run "$examples/data_parallel_grads.hlo" --slice v5e-8 \
  --input x.npy --output-dir dp_hlo --no-cache
cmp -s dp_out/result0.npy dp_hlo/result0.npy || fail "HLO data parallel values differ"
grep -qE '^  .* ici +%all-reduce-start stablehlo.all_reduce ' stdout.txt ||
  fail "HLO instruction names in the costliest ops: $(grep -A2 '^costliest' stdout.txt)"
[[ $(grep '^  time ' stdout.txt) == $("$tpusim" run "$dp" --slice v5e-8 --timing-only --no-cache |
  grep '^  time ') ]] || fail "HLO data parallel time differs"
# Converted to HLO, the step keeps its shardings (so its inputs split alike).
expect_exit 0 "convert a sharded step" "$tpusim" convert "$dp" --to hlo
grep -q 'parameter(0), sharding={devices=\[8,1\]0,1,2,3,4,5,6,7}$' stdout.txt ||
  fail "convert: no parameter sharding: $(grep 'parameter(0)' stdout.txt)"
mv stdout.txt dp_converted.hlo
expect_exit 0 "converted step" "$tpusim" run dp_converted.hlo --slice v5e-8 --input x.npy \
  --output-dir dp_converted --no-cache
cmp -s dp_out/result0.npy dp_converted/result0.npy || fail "converted HLO step: other values"
tp=$examples/tensor_parallel_mlp.mlir
expect_exit 0 "tensor parallel values" "$tpusim" run "$tp" --slice v5e-8 --input tx.npy \
  --input w1.npy --input w2.npy --output-dir tp_out --no-cache --trace tp_trace.json
$py - <<'PY' || fail "values run trace"
import json
trace = json.load(open("tp_trace.json"))["traceEvents"]
names = {e["pid"]: e["args"]["name"] for e in trace if e["name"] == "process_name"}
want = ["device 0 (v5e)"] + [f"device {d}" for d in range(1, 8)]
assert [names[pid] for pid in range(2, 10)] == want, names
for pid, name in names.items():
    if name.startswith("device"):
        assert any(e["pid"] == pid and "all_reduce" in e["name"] for e in trace), name
PY
cat >tp_global.mlir <<'MLIR'
func.func @main(%x: tensor<128x1024xbf16>, %w1: tensor<1024x4096xbf16>, %w2: tensor<4096x1024xbf16>) -> tensor<128x1024xf32> {
  %h = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<128x1024xbf16>, tensor<1024x4096xbf16>) -> tensor<128x4096xf32>
  %a = stablehlo.tanh %h : tensor<128x4096xf32>
  %b = stablehlo.convert %a : (tensor<128x4096xf32>) -> tensor<128x4096xbf16>
  %p = stablehlo.dot_general %b, %w2, contracting_dims = [1] x [0] : (tensor<128x4096xbf16>, tensor<4096x1024xbf16>) -> tensor<128x1024xf32>
  return %p : tensor<128x1024xf32>
}
MLIR
expect_exit 0 "tensor parallel on one chip" "$tpusim" run tp_global.mlir --input tx.npy \
  --input w1.npy --input w2.npy --output-dir tp_one --no-cache
$py - <<'PY' || fail "values on a slice differ from one chip's"
import numpy as np
def bf16(a):
    b = a.astype(np.float32).view(np.uint32)
    return ((b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000).view(np.float32).astype(np.float64)
x = bf16(np.load("x.npy"))
dp = np.load("dp_out/result0.npy")
assert np.allclose(dp, x.T @ x, rtol=1e-5, atol=1e-3), np.abs(dp - x.T @ x).max()
tp, one = np.load("tp_out/result0.npy"), np.load("tp_one/result0.npy")
assert np.allclose(tp, one, rtol=1e-5, atol=1e-5), np.abs(tp - one).max()
PY

# A global program with a shard_map region (GSPMD's Sharding and
# SPMDFullToShardShape/SPMDShardToFullShape markers): whole arrays in and out,
# each device's tile inside.
sm=$examples/shard_map_psum.mlir
$py -c "import numpy as np; np.save('smx.npy', np.random.default_rng(2).standard_normal((512, 256)).astype(np.float32))"
expect_exit 0 "shard_map values" "$tpusim" run "$sm" --slice v5e-8 --input smx.npy \
  --output-dir sm_out --no-cache
$py - <<'PY' || fail "shard_map values differ from numpy"
import numpy as np
x, r = np.load("smx.npy"), np.load("sm_out/result0.npy")
tiles = x.reshape(8, 64, 256)
assert np.array_equal(r, (tiles + tiles.sum(0)).reshape(512, 256)), np.abs(r - (tiles + tiles.sum(0)).reshape(512, 256)).max()
PY
expect_exit 0 "shard_map timing" "$tpusim" run "$sm" --slice v5e-8 --timing-only --no-cache
grep -q "custom-call 'SPMD" stdout.txt && fail "shard_map markers noted as foreign code"
expect_exit 2 "shard_map on one chip" "$tpusim" run "$sm" --input smx.npy --output-dir sm_one --no-cache
grep -q 'this program runs as 1 replica x 8 partitions .* pass --slice with 8 devices' stderr.txt ||
  fail "shard_map one chip: $(cat stderr.txt)"
[[ -e sm_one ]] && fail "shard_map on one chip wrote sm_one/"
expect_exit 2 "shard_map timed on one chip" "$tpusim" run "$sm" --timing-only --no-cache
# The same kind of program under Shardy: sdy.manual_computation over a 4x2 mesh.
sdy=$examples/shard_map_sdy.mlir
$py -c "import numpy as np; np.save('sdyb.npy', np.random.default_rng(3).standard_normal(256).astype(np.float32))"
expect_exit 0 "sdy shard_map values" "$tpusim" run "$sdy" --slice v5e-8 --input smx.npy \
  --input sdyb.npy --output-dir sdy_out --no-cache
$py - <<'PY' || fail "sdy shard_map values differ from numpy"
import numpy as np
x, b, r = np.load("smx.npy"), np.load("sdyb.npy"), np.load("sdy_out/result0.npy")
blocks = x.reshape(4, 128, 256)
want = (blocks + blocks.sum(0) + b).reshape(512, 256)
assert np.array_equal(r, want), np.abs(r - want).max()
PY
expect_exit 0 "sdy shard_map timing" "$tpusim" run "$sdy" --slice v5e-8 --timing-only --no-cache
grep -q 'per axis: x 0 B (0.0% busy), 0 B; y 98.30 KB' stdout.txt ||
  fail "sdy shard_map: the data-axis groups use the y links: $(grep 'ICI links  ' stdout.txt)"
sed 's/<@mesh, \[{"model"}\]>\]/<@nomesh, [{"model"}]>]/' "$sdy" >sdy_bad_mesh.mlir
expect_exit 2 "sdy undefined mesh" "$tpusim" run sdy_bad_mesh.mlir --slice v5e-8 --random-inputs \
  --output-dir sdy_bad --no-cache
grep -q 'sdy_bad_mesh.mlir:14:5: .*undefined mesh @nomesh' stderr.txt || fail "sdy bad mesh: $(cat stderr.txt)"
[[ ! -e sdy_bad ]] || fail "sdy bad mesh wrote results"

# --- XLA HLO input: the same MLP step as XLA dumps it gives the same values and time.
"$tpusim" run "$mlp" --random-inputs --seed 3 --output-dir mlir_out --no-cache >mlir.txt ||
  fail "mlir run"
"$tpusim" run "$examples/mlp_step.hlo" --random-inputs --seed 3 --output-dir hlo_out \
  --no-cache >hlo.txt || fail "hlo run: $(cat hlo.txt)"
for i in 0 1 2 3 4; do
  cmp -s "mlir_out/result$i.npy" "hlo_out/result$i.npy" || fail "HLO result$i differs"
done
[[ $(grep '^  time ' mlir.txt) == $(grep '^  time ' hlo.txt) ]] ||
  fail "HLO time differs: $(grep '^  time ' mlir.txt hlo.txt)"
expect_exit 0 "convert to hlo" "$tpusim" convert "$mlp" --to hlo
mv stdout.txt mlp.hlo
head -n 1 mlp.hlo | grep -q '^HloModule ' || fail "convert: $(head -n 2 mlp.hlo)"
"$tpusim" run mlp.hlo --random-inputs --seed 3 --output-dir hlo2_out --no-cache >/dev/null ||
  fail "converted HLO does not run"
for i in 0 1 2 3 4; do
  cmp -s "mlir_out/result$i.npy" "hlo2_out/result$i.npy" || fail "converted HLO result$i differs"
done
expect_exit 0 "convert back to mlir" "$tpusim" convert mlp.hlo
grep -q '"stablehlo.dot_general"' stdout.txt || fail "convert to mlir: $(head -n 3 stdout.txt)"
cat >bad.hlo <<'HLO'
HloModule bad

ENTRY %main (p: f32[2]) -> f32[2] {
  %p = f32[2]{0} parameter(0)
  ROOT %r = f32[2]{0} frobnicate(f32[2]{0} %p)
}
HLO
expect_exit 3 "unknown HLO opcode" "$tpusim" run bad.hlo --timing-only
grep -q 'bad.hlo:5:.*frobnicate' stderr.txt || fail "unknown HLO opcode: $(cat stderr.txt)"

# Flags a user mistypes: one located line each, naming the subcommand's help.
expect_exit 2 "empty slice" "$tpusim" run add.mlir --slice '' --timing-only
grep -q -- "--slice: must not be empty (see tpusim run --help)" stderr.txt ||
  fail "empty slice: $(cat stderr.txt)"
expect_exit 2 "negative trip count" "$tpusim" run add.mlir --timing-only --trip-count -5
grep -q -- "--trip-count: must be 0 or more, not -5" stderr.txt || fail "trip count: $(cat stderr.txt)"
expect_exit 2 "negative seed" "$tpusim" run add.mlir --random-inputs --seed -1
expect_exit 2 "chip and chip file" "$tpusim" run add.mlir --chip v5p --chip-file chip.toml
grep -q -- "--chip excludes --chip-file" stderr.txt || fail "chip and chip file: $(cat stderr.txt)"
expect_exit 2 "plan flag" "$tpusim" plan --bogus
grep -q "(see tpusim plan --help)" stderr.txt || fail "plan flag: $(cat stderr.txt)"
expect_exit 0 "7x slice" "$tpusim" run add.mlir --slice 7x-8 --timing-only
grep -q '^slice: tpu7x-8: 4 7x chips' stdout.txt || fail "7x slice: $(grep slice stdout.txt)"

# Not a program: a directory, an empty file, binary bytes.
mkdir -p a_dir
expect_exit 2 "directory" "$tpusim" run a_dir
grep -q "a_dir is a directory, not a file" stderr.txt || fail "directory: $(cat stderr.txt)"
: >empty.mlir
expect_exit 2 "empty file" "$tpusim" run empty.mlir
grep -q "empty.mlir is empty" stderr.txt || fail "empty file: $(cat stderr.txt)"
printf 'func.func @main() {\n  \001\002 x \377\376\n}\n' >bytes.mlir
expect_exit 2 "stray bytes" "$tpusim" run bytes.mlir
LC_ALL=C grep -q $'[\001\002\377]' stderr.txt && fail "stray bytes: echoed raw: $(cat -v stderr.txt)"
grep -qF '  ?? x ??' stderr.txt || fail "stray bytes: $(cat -v stderr.txt)"

# Ctrl-C on an endless loop: on a terminal a progress line after a few
# seconds; then the report of what ran, no results, exit 130.
cat >endless.mlir <<'EOF'
func.func @main(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %r = stablehlo.while(%a = %x) : tensor<64x64xf32>
    cond {
      %t = stablehlo.constant dense<true> : tensor<i1>
      stablehlo.return %t : tensor<i1>
    } do {
      %b = stablehlo.tanh %a : tensor<64x64xf32>
      stablehlo.return %b : tensor<64x64xf32>
    }
  return %r : tensor<64x64xf32>
}
EOF
script -qec "timeout --preserve-status -s INT 6 '$tpusim' run endless.mlir --random-inputs \
  --output-dir endless_out" /dev/null >endless.txt 2>&1
status=$?
[[ $status -eq 130 ]] || fail "Ctrl-C: exit $status, not 130: $(tail -n 3 endless.txt)"
grep -q "computing values: [0-9]* s, [0-9]* ops, iteration [0-9]* of the stablehlo.while at endless.mlir:2:3" \
  endless.txt || fail "Ctrl-C: no progress line: $(head -c 600 endless.txt)"
grep -q "^note: stopped on request after [0-9]* ops" endless.txt || fail "Ctrl-C: no partial report"
grep -q "^  time " endless.txt || fail "Ctrl-C: no timing report"
grep -q "^tpusim: endless.mlir:[0-9:]*: stopped" endless.txt || fail "Ctrl-C: $(tail -n 1 endless.txt)"
[[ -e endless_out ]] && fail "Ctrl-C: results written"
# Not on a terminal: no progress line, the same stop.
"$tpusim" run endless.mlir --random-inputs --output-dir endless_out >stdout.txt 2>stderr.txt &
pid=$!
sleep 1
kill -INT $pid
wait $pid
status=$?
[[ $status -eq 130 ]] || fail "Ctrl-C, no terminal: exit $status"
grep -q "computing values" stderr.txt && fail "Ctrl-C, no terminal: a progress line"
grep -q "^note: stopped on request" stdout.txt || fail "Ctrl-C, no terminal: no partial report"

# LAPACK (and OpenBLAS's spinning thread pool behind it) loads on first use only.
LD_DEBUG=libs "$tpusim" run "$examples/matmul.mlir" --random-inputs --numerics reference \
  >/dev/null 2>ld_debug.txt || fail "LAPACK check: the run failed"
grep -q "calling init: .*libdnnl" ld_debug.txt || fail "LAPACK check: LD_DEBUG shows no library"
grep -q "calling init: .*\(lapack\|blas\)" ld_debug.txt && fail "LAPACK loaded by a run without LAPACK calls"

if [[ $failures -gt 0 ]]; then
  echo "$failures CLI checks failed"
  exit 1
fi
echo "all CLI checks passed"

#!/usr/bin/env bash
# End-to-end tests of `tpusim run --steps N --checkpoint-dir DIR` on
# examples/train_step/sgd.mlir: N steps match numpy's N updates; a run
# resumed from a checkpoint, or from whatever a SIGKILL left, ends with the
# bytes of an uninterrupted run; a corrupted manifest and flags that do not
# go together are one-line errors.
#
# usage: steps_test.sh TPUSIM EXAMPLES_DIR
set -uo pipefail
tpusim=$1
sgd=$2/train_step/sgd.mlir
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

$py - <<'PY' || { echo "FAILED: numpy inputs"; exit 1; }
import numpy as np
rng = np.random.default_rng(3)
x = rng.standard_normal((256, 32)).astype(np.float32)
np.save("x.npy", x)
np.save("y.npy", (x @ rng.standard_normal(32) + 0.5).astype(np.float32))
np.save("w.npy", np.zeros(32, np.float32))
np.save("b.npy", np.float32(0))
np.save("t.npy", np.int32(0))
PY
inputs=(--input w.npy --input b.npy --input t.npy --input x.npy --input y.npy)
data=(--input x=x.npy --input y=y.npy)  # the constant inputs alone, for resuming

# run NAME ARGS...: tpusim run sgd.mlir into output directory NAME, its
# output in NAME.txt; fails the test on a non-zero exit.
run() {
  local name=$1
  shift
  "$tpusim" run "$sgd" --numerics reference --output-dir "$name" "$@" >"$name.txt" 2>&1 ||
    fail "$name: $(tail -n 1 "$name.txt")"
}

# same A B: the results of runs A and B are byte-identical .npy files.
same() {
  for i in 0 1 2; do
    cmp -s "$1/result$i.npy" "$2/result$i.npy" || { fail "$2: result$i differs from $1's"; return; }
  done
}

# (a) Five steps in one run are numpy's five updates, one line per step.
run five --steps 5 "${inputs[@]}"
for n in 1 2 3 4 5; do
  grep -q "^step $n: [0-9.]* [mun]*s, MXU [0-9.]*%$" five.txt || fail "five: no line for step $n in $(cat five.txt)"
done
grep -q "^step 6" five.txt && fail "five: a sixth step"
grep -q "^  time " five.txt || fail "five: no timing report"
$py - <<'PY' || fail "five: values differ from numpy"
import numpy as np
x, y = np.load("x.npy"), np.load("y.npy")
w, b = np.load("w.npy"), np.load("b.npy")
lr = np.float32(2.0**-9)
for _ in range(5):
    err = x @ w + b - y
    w, b = w - lr * (err @ x), b - lr * err.sum()
got = [np.load("five/result%d.npy" % i) for i in range(3)]
assert got[2] == 5 and got[2].dtype == np.int32, got[2]
assert np.allclose(got[0], w, rtol=1e-5, atol=1e-5), np.abs(got[0] - w).max()
assert np.allclose(got[1], b, rtol=1e-5, atol=1e-5), (got[1], b)
PY

# (b) Three steps with checkpoints, then five from them: the five-step state.
run three --steps 3 --checkpoint-dir ck --checkpoint-every 1 "${inputs[@]}"
$py -c 'import json; m = json.load(open("ck/manifest.json")); assert m["step"] == 3, m' ||
  fail "three: manifest is not at step 3"
[ "$(ls -d ck/step-*)" = "$(printf 'ck/step-2\nck/step-3')" ] ||
  fail "three: step directories $(ls ck)"
run resumed --steps 5 --checkpoint-dir ck "${data[@]}"
grep -q "^resumed from step 3 (ck)$" resumed.txt || fail "resumed: $(cat resumed.txt)"
grep -q "^step 3:" resumed.txt && fail "resumed: ran step 3 again"
grep -q "^step 5:" resumed.txt || fail "resumed: no step 5 in $(cat resumed.txt)"
same five resumed
run done --steps 4 --checkpoint-dir ck "${data[@]}"
grep -q "nothing to do: the checkpoint is at step 5" done.txt || fail "done: $(cat done.txt)"
same five done
# By default a checkpoint waits for a minute of wall time: three quick steps
# save once, after the last. Resumed with the constant inputs given by
# position, as the first run gave them, they bind to the constant parameters.
run timed --steps 3 --checkpoint-dir ckt "${inputs[@]}"
[ "$(ls -d ckt/step-*)" = "ckt/step-3" ] || fail "timed: step directories $(ls ckt)"
run positional --steps 5 --checkpoint-dir ckt --input x.npy --input y.npy
grep -q "^resumed from step 3 (ckt)$" positional.txt || fail "positional: $(cat positional.txt)"
same five positional

# (c) SIGKILLs at any time leave a manifest naming whole shards; the run
# resumed after them ends as one that was never killed. A step takes a few
# ms, a checkpoint tens (fsync), so a kill lands in either. Each kill waits
# for a checkpoint to exist first, however slow the build (sanitizers) or
# the machine.
steps=2000
run full --steps $steps "${inputs[@]}"
kills=0
for delay in 0.2 0.05 0.3 0.01; do
  "$tpusim" run "$sgd" --numerics reference --steps $steps --checkpoint-dir kk \
    --checkpoint-every 10 --output-dir killed "${inputs[@]}" >killed.txt 2>&1 &
  pid=$!
  for _ in $(seq 3000); do
    [ -f kk/manifest.json ] && [ "$(cat killed.txt)" != "" ] && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.1
  done
  sleep $delay
  kill -KILL $pid 2>/dev/null && kills=$((kills + 1))
  wait $pid 2>/dev/null
  [ -f kk/manifest.json ] || continue
  $py - <<'PY' || fail "after a kill: $(cat kk/manifest.json)"
import json, numpy as np
m = json.load(open("kk/manifest.json"))
for shard in m["shards"]:
    a = np.load("kk/" + shard["file"])
    assert list(a.shape) == shard["shape"], shard
assert int(np.load("kk/" + m["shards"][2]["file"])) == m["step"], m
PY
done
[ $kills -gt 0 ] || fail "killed: every run ended before its kill; make the steps slower"
run killed --steps $steps --checkpoint-dir kk --checkpoint-every 10 "${inputs[@]}"
grep -q "^resumed from step [0-9]* (kk)$" killed.txt || fail "killed: no resume in $(head -n 3 killed.txt)"
same full killed

# (d) A corrupted manifest: one line on stderr, exit status 2.
echo '{"version": 1, "step": 3, "shards": [' >ck/manifest.json
"$tpusim" run "$sgd" --steps 5 --checkpoint-dir ck "${data[@]}" --output-dir torn >torn.txt 2>torn.err
status=$?
[ $status -eq 2 ] || fail "torn: exit status $status, expected 2"
[ "$(wc -l <torn.err)" -eq 1 ] && grep -q "^tpusim: ck/manifest.json: malformed checkpoint manifest" torn.err ||
  fail "torn: $(cat torn.err)"

# A program whose results are not its leading parameters is no train step.
cat >notstate.mlir <<'MLIR'
func.func @main(%a: tensor<3xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  return %b : tensor<2xf32>
}
MLIR
"$tpusim" run notstate.mlir --random-inputs --steps 2 --output-dir n >notstate.txt 2>&1
status=$?
[ $status -eq 2 ] || fail "notstate: exit status $status, expected 2"
grep -q "@main result 0 is tensor<2xf32> but input %a is tensor<3xf32>" notstate.txt ||
  fail "notstate: $(cat notstate.txt)"

# Timing only: the steps timed, no checkpoints.
"$tpusim" run "$sgd" --timing-only --steps 3 >timing.txt 2>&1 || fail "timing: $(tail -n 1 timing.txt)"
grep -q "^step 3: " timing.txt || fail "timing: $(cat timing.txt)"
"$tpusim" run "$sgd" --timing-only --checkpoint-dir ck2 >timingck.txt 2>&1
status=$?
[ $status -eq 2 ] || fail "timing with checkpoints: exit status $status, expected 2"
grep -q "does not compute" timingck.txt || fail "timing with checkpoints: $(cat timingck.txt)"
[ -e ck2 ] && fail "timing with checkpoints: wrote ck2"

if [ $failures -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "steps: all passed"

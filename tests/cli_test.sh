#!/usr/bin/env bash
# End-to-end tests of the tpusim CLI: `run` with .npy inputs and outputs,
# random inputs, exit statuses and messages for bad input, and `check`.
# numpy (from /usr/bin/python3) makes and verifies the .npy files.
#
# usage: cli_test.sh TPUSIM
set -uo pipefail
tpusim=$1
py=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
failures=0

fail() { echo "FAILED: $*"; failures=$((failures + 1)); }

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
for d in e1 e2 e3 e4 e5 e6 e7 e8; do
  [[ -z $(ls -A "$d" 2>/dev/null) ]] || fail "$d: output files left after an error"
done

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

if [[ $failures -gt 0 ]]; then
  echo "$failures CLI checks failed"
  exit 1
fi
echo "all CLI checks passed"

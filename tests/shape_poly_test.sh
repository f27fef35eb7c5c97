#!/usr/bin/env bash
# End-to-end tests of shape-polymorphic programs (examples/shape_poly, in the
# form jax.export writes them): each runs on .npy inputs of two shapes and
# matches numpy; a shape that breaks the polymorphic specification fails
# with jax's message filled in; --random-inputs and --timing-only need
# --arg-shape and say so; convert refines for --arg-shape.
#
# usage: shape_poly_test.sh TPUSIM EXAMPLES_DIR
set -uo pipefail
tpusim=$1
examples=$2/shape_poly
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Inputs: x<ROWS>x<COLS>.npy and the MLP's weights.
$py - <<'PY' || { echo "FAILED: numpy inputs"; exit 1; }
import numpy as np
rng = np.random.default_rng(7)
for shape in [(3, 4), (16, 4), (6, 4), (10, 4), (5, 4), (2, 5), (7, 33)]:
    np.save("x%dx%d.npy" % shape, rng.standard_normal(shape).astype(np.float32))
np.save("w1.npy", rng.standard_normal((4, 8)).astype(np.float32))
np.save("b1.npy", rng.standard_normal(8).astype(np.float32))
np.save("w2.npy", rng.standard_normal((8, 3)).astype(np.float32))
PY

# run_case NAME PROGRAM X EXPR [ARGS...]: runs PROGRAM on X (and ARGS), and
# compares result0 with EXPR, a numpy expression of x (and w1, b1, w2).
run_case() {
  local name=$1 program=$examples/$2.mlir x=$3 expr=$4
  shift 4
  "$tpusim" run "$program" --input "$x" "$@" --numerics reference --output-dir "$name" \
    >"$name.txt" 2>&1 || { fail "$name: $(tail -n 1 "$name.txt")"; return; }
  $py - "$name/result0.npy" "$x" "$expr" <<'PY' || fail "$name: values differ from numpy"
import sys
import numpy as np
got = np.load(sys.argv[1]).astype(np.float64)
x = np.load(sys.argv[2]).astype(np.float64)
w1, b1, w2 = (np.load(f).astype(np.float64) for f in ("w1.npy", "b1.npy", "w2.npy"))
want = eval(sys.argv[3])
assert got.shape == want.shape, (got.shape, want.shape)
err = np.abs(got - want).max() if got.size else 0.0
assert err <= 1e-5 * max(1.0, np.abs(want).max()), err
PY
}

mlp="np.maximum(x @ w1 + b1, 0) @ w2"
run_case mlp3 mlp x3x4.npy "$mlp" --input w1.npy --input b1.npy --input w2.npy
run_case mlp16 mlp x16x4.npy "$mlp" --input w1.npy --input b1.npy --input w2.npy
softmax="np.exp(x - x.max(1, keepdims=True)) / np.exp(x - x.max(1, keepdims=True)).sum(1, keepdims=True)"
run_case softmax2x5 softmax x2x5.npy "$softmax"
run_case softmax7x33 softmax x7x33.npy "$softmax"
flat="(x.reshape(-1) + np.arange(x.size))[: x.size // 2]"
run_case reshape6 reshape x6x4.npy "$flat"
run_case reshape10 reshape x10x4.npy "$flat"

# Sizes from b in custom calls: cumsum through a b-row window, top k and
# approx top k with k = b // 2, random bits of shape (b, 4).
for x in x6x4.npy x10x4.npy; do
  name=sort_scan_${x%.npy}
  "$tpusim" run "$examples/sort_scan.mlir" --input "$x" --numerics reference --output-dir "$name" \
    >"$name.txt" 2>&1 || { fail "$name: $(tail -n 1 "$name.txt")"; continue; }
  $py - "$name" "$x" <<'PY' || fail "$name: values differ from numpy"
import sys
import numpy as np
out, x = sys.argv[1], np.load(sys.argv[2])
r = [np.load(f"{out}/result{i}.npy") for i in range(5)]
k = x.shape[0] // 2
order = np.argsort(-x.T, axis=1, kind="stable")[:, :k]
assert np.allclose(r[0], np.cumsum(x.astype(np.float64), axis=0), rtol=1e-5, atol=1e-5)
assert np.array_equal(r[1], np.take_along_axis(x.T, order, 1)) and np.array_equal(r[2], order)
assert np.array_equal(r[3], r[1]), "approx top k: the exact answer"
assert r[4].shape == x.shape and r[4].dtype == np.uint32 and len(np.unique(r[4])) > x.size // 2
PY
done

# The refined program is static: the dump's first program has no '?'.
"$tpusim" run "$examples/mlp.mlir" --input x3x4.npy --input w1.npy --input b1.npy \
  --input w2.npy --output-dir dumped --dump-dir dump >dump.txt 2>&1 ||
  fail "dump: $(tail -n 1 dump.txt)"
if grep -q '?x' dump/00-input.mlir || grep -q 'shape_assertion\|dynamic_broadcast' dump/00-input.mlir; then
  fail "dump: the refined program still has dynamic shapes or assertions"
fi

# An odd batch breaks (2*k, 4): jax's message, its values filled in; exit 2,
# as for any input of the wrong shape.
"$tpusim" run "$examples/reshape.mlir" --input x5x4.npy --output-dir odd >odd.txt 2>&1
status=$?
[ $status -eq 2 ] || fail "odd batch: exit status $status, expected 2"
grep -q "Division had remainder 1 when computing the value of 'k'.*'k' = 5 from specification '2\*k' for dimension args\[0\].shape\[0\] (= 5)" odd.txt ||
  fail "odd batch: $(cat odd.txt)"

# --random-inputs and --timing-only need the shapes.
"$tpusim" run "$examples/softmax.mlir" --random-inputs --output-dir r >noshape.txt 2>&1
status=$?
[ $status -eq 2 ] || fail "no shape: exit status $status, expected 2"
grep -q "input %arg0 has the dynamic type tensor<?x?xf32>: give its shape with --arg-shape arg0=DIMS" \
  noshape.txt || fail "no shape: $(cat noshape.txt)"
"$tpusim" run "$examples/softmax.mlir" --random-inputs --arg-shape arg0=4x128 --output-dir r \
  >random.txt 2>&1 || fail "random: $(tail -n 1 random.txt)"
grep -q "result0: tensor<4x128xf32>" random.txt || fail "random: $(cat random.txt)"
"$tpusim" run "$examples/mlp.mlir" --timing-only --arg-shape arg0=1024x4 >timing.txt 2>&1 ||
  fail "timing-only: $(tail -n 1 timing.txt)"
grep -q "dot_general" timing.txt || fail "timing-only: no dot_general in $(cat timing.txt)"
"$tpusim" run "$examples/mlp.mlir" --timing-only --arg-shape arg0=4 >rank.txt 2>&1
grep -q "tensor<?x4xf32>, which tensor<4xf32> does not fit" rank.txt || fail "rank: $(cat rank.txt)"
"$tpusim" run "$examples/mlp.mlir" --timing-only --arg-shape arg0=0x4 >zero.txt 2>&1
grep -q "Expected value >= 1 for dimension variable 'b'.*'b' = 0" zero.txt || fail "zero: $(cat zero.txt)"

# convert: HLO text needs the shapes; with them, the program is static.
"$tpusim" convert "$examples/mlp.mlir" --to hlo >hlo.txt 2>&1 && fail "convert without shapes succeeded"
grep -q "give its shape with --arg-shape" hlo.txt || fail "convert without shapes: $(cat hlo.txt)"
"$tpusim" convert "$examples/mlp.mlir" --to hlo --arg-shape arg0=5x4 >hlo.txt 2>&1 ||
  fail "convert: $(tail -n 1 hlo.txt)"
grep -q "f32\[5,3\]" hlo.txt || fail "convert: no f32[5,3] in $(cat hlo.txt)"

if [ $failures -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "shape_poly: all passed"

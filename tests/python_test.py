"""The Python module: tpusim.run/time/chips against numpy and the CLI.

Run as: python3 tests/python_test.py TPUSIM_BINARY EXAMPLES_DIR, with the
build's python/ folder on PYTHONPATH.
"""

import json
import os
import subprocess
import sys
import tempfile
import threading
import unittest

import numpy as np

import tpusim

TPUSIM = sys.argv[1] if len(sys.argv) > 1 else "build/tpusim"
EXAMPLES = sys.argv[2] if len(sys.argv) > 2 else "examples"

MATMUL = """
module @jit_f {
  func.func public @main(%arg0: tensor<64x32xf32>, %arg1: tensor<32x16xf32>) -> tensor<64x16xf32> {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32>
    return %0 : tensor<64x16xf32>
  }
}
"""

BF16_ADD = """
module @jit_g {
  func.func public @main(%arg0: tensor<4xbf16>, %arg1: tensor<4xbf16>) -> (tensor<4xbf16>, tensor<4xi32>) {
    %0 = stablehlo.add %arg0, %arg1 : tensor<4xbf16>
    %1 = stablehlo.iota dim = 0 : tensor<4xi32>
    return %0, %1 : tensor<4xbf16>, tensor<4xi32>
  }
}
"""


def round_to_bf16(a):
    """float32 values rounded to the nearest bf16 (ties to even), as float32."""
    bits = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32)


class RunTest(unittest.TestCase):

    def setUp(self):
        rng = np.random.default_rng(0)
        self.x = rng.standard_normal((64, 32)).astype(np.float32)
        self.w = rng.standard_normal((32, 16)).astype(np.float32)

    def test_reference_numerics_equal_numpy(self):
        (y,), report = tpusim.run(MATMUL, self.x, self.w, numerics="reference")
        self.assertEqual(y.dtype, np.float32)
        self.assertEqual(y.shape, (64, 16))
        want = self.x.astype(np.float64) @ self.w.astype(np.float64)
        np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)

    def test_tpu_numerics_round_operands_to_bf16(self):
        (y,), _ = tpusim.run(MATMUL, self.x, self.w)  # DEFAULT: one bf16 pass
        want = round_to_bf16(self.x).astype(np.float64) @ round_to_bf16(self.w).astype(np.float64)
        np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-4)
        exact = self.x.astype(np.float64) @ self.w.astype(np.float64)
        self.assertGreater(np.abs(y - exact).max(), 1e-3)
        (z,), _ = tpusim.run(MATMUL, self.x, self.w, precision="highest")
        np.testing.assert_allclose(z, exact, rtol=1e-5, atol=1e-5)

    def test_report(self):
        _, report = tpusim.run(MATMUL, self.x, self.w, chip="v5p")
        self.assertGreater(report.total_seconds, 0)
        self.assertGreater(report.mfu, 0)
        self.assertLessEqual(report.mfu, 1)
        self.assertEqual(report.flops, 2 * 64 * 32 * 16)
        self.assertIn("stablehlo.dot_general", [op["op"] for op in report.ops])
        self.assertEqual(json.loads(report.to_json())["total_seconds"], report.total_seconds)
        self.assertIn("v5p", str(report))

    def test_time_matches_run(self):
        _, ran = tpusim.run(MATMUL, self.x, self.w, chip="v4")
        timed = tpusim.time(MATMUL, chip="v4")
        self.assertAlmostEqual(timed.total_seconds, ran.total_seconds, delta=1e-12)
        slow = tpusim.time(MATMUL, chip="v2")
        self.assertGreater(slow.total_seconds, timed.total_seconds)

    def test_trace(self):
        report = tpusim.time(MATMUL, trace=True)
        self.assertIn("traceEvents", json.loads(report.trace()))
        with self.assertRaises(tpusim.Error):
            tpusim.time(MATMUL).trace()

    def test_html_page(self):
        report = tpusim.time(MATMUL)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "run.html")
            self.assertEqual(report.html(path), path)
            with open(path, encoding="utf-8") as f:
                page = f.read()
            self.assertTrue(page.startswith("<!DOCTYPE html>"))
            self.assertEqual(page, report.html())
            self.assertIn('"schema":"tpusim.report/1"', page)
            # A folder that does not exist: an error, and no file.
            with self.assertRaisesRegex(tpusim.Error, "cannot write"):
                report.html(os.path.join(d, "no", "run.html"))
            self.assertEqual(os.listdir(d), ["run.html"])

    def test_bf16_results_come_back_as_float32_and_ints_as_ints(self):
        a = np.array([1.0, 1.0 / 3.0, 256.0, -2.5], np.float32)
        b = np.array([2.0 ** -9, 0.0, 1.0, 0.5], np.float32)
        (s, i), _ = tpusim.run(BF16_ADD, a, b)
        self.assertEqual(s.dtype, np.float32)
        np.testing.assert_array_equal(s, round_to_bf16(round_to_bf16(a) + round_to_bf16(b)))
        np.testing.assert_array_equal(i, np.arange(4, dtype=np.int32))

    def test_program_from_a_path_and_the_cli_agree(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "f.mlir")
            with open(path, "w") as f:
                f.write(MATMUL)
            np.save(os.path.join(d, "x.npy"), self.x)
            np.save(os.path.join(d, "w.npy"), self.w)
            subprocess.run([TPUSIM, "run", path, "--input", os.path.join(d, "x.npy"),
                            "--input", os.path.join(d, "w.npy"), "--output-dir", d,
                            "--no-cache"], check=True, capture_output=True)
            (y,), _ = tpusim.run(path, self.x, self.w)
            np.testing.assert_array_equal(y, np.load(os.path.join(d, "result0.npy")))

    def test_onnx_model_sized_by_its_arrays_as_the_cli_runs_it(self):
        path = os.path.join(EXAMPLES, "onnx", "tiny_gpt.onnx")  # dynamic batch and sequence
        tokens = np.random.default_rng(3).integers(0, 256, size=(3, 10)).astype(np.int64)
        (logits,), report = tpusim.run(path, tokens, numerics="reference")
        self.assertEqual(logits.shape, (3, 10, 256))
        self.assertGreater(report.total_seconds, 0)
        with tempfile.TemporaryDirectory() as d:
            np.save(os.path.join(d, "tokens.npy"), tokens)
            subprocess.run([TPUSIM, "run", path, "--input", os.path.join(d, "tokens.npy"),
                            "--numerics", "reference", "--output-dir", d, "--no-cache"],
                           check=True, capture_output=True)
            np.testing.assert_array_equal(logits, np.load(os.path.join(d, "result0.npy")))
        # Timing only: the dynamic axes sized by name.
        timed = tpusim.time(path, arg_shapes={"tokens": (8, 128)}, chip="v6e")
        self.assertGreater(timed.total_seconds, report.total_seconds)

    def test_example_train_step(self):
        rng = np.random.default_rng(1)
        shapes = [(8, 32), (32,), (32, 4), (4,), (16, 8), (16, 4)]
        args = [rng.standard_normal(s).astype(np.float32) for s in shapes]
        results, report = tpusim.run(os.path.join(EXAMPLES, "mlp_step.mlir"), *args,
                                     numerics="reference")
        w1, b1, w2, b2, x, y = [a.astype(np.float64) for a in args]
        h = np.maximum(x @ w1 + b1, 0)
        loss = np.mean((h @ w2 + b2 - y) ** 2)
        self.assertAlmostEqual(float(results[4]), loss, places=4)
        self.assertEqual(len(results), 5)

    def test_shape_polymorphic_program_takes_the_arrays_shapes(self):
        path = os.path.join(EXAMPLES, "shape_poly", "softmax.mlir")
        for shape in [(3, 5), (7, 2)]:
            x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
            (y,), _ = tpusim.run(path, x, numerics="reference")
            e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
            np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5)
        small = tpusim.time(path, arg_shapes={"arg0": (8, 128)})
        large = tpusim.time(path, arg_shapes={"arg0": (4096, 4096)})
        self.assertGreater(large.total_seconds, small.total_seconds)
        with self.assertRaisesRegex(tpusim.Error, "--arg-shape"):
            tpusim.time(path)


SHARED = """
func.func @main(%a: tensor<64x256xf32>, %u: tensor<2x2xf32>) -> (tensor<64x256xf32>, tensor<64x256xf32>, tensor<64x256xf32>, tensor<64x256xf32>) {
  %i = stablehlo.constant dense<1> : tensor<i32>
  %0 = stablehlo.dynamic_update_slice %a, %u, %i, %i : (tensor<64x256xf32>, tensor<2x2xf32>, tensor<i32>, tensor<i32>) -> tensor<64x256xf32>
  %1 = stablehlo.add %a, %a : tensor<64x256xf32>
  return %a, %a, %0, %1 : tensor<64x256xf32>, tensor<64x256xf32>, tensor<64x256xf32>, tensor<64x256xf32>
}
"""

# %a's only use: an op free to write into its operand's storage must not
# when that storage is the caller's array.
UPDATE = """
func.func @main(%a: tensor<64x256xf32>, %u: tensor<2x2xf32>) -> tensor<64x256xf32> {
  %i = stablehlo.constant dense<1> : tensor<i32>
  %0 = stablehlo.dynamic_update_slice %a, %u, %i, %i : (tensor<64x256xf32>, tensor<2x2xf32>, tensor<i32>, tensor<i32>) -> tensor<64x256xf32>
  %1 = stablehlo.multiply %0, %0 : tensor<64x256xf32>
  return %1 : tensor<64x256xf32>
}
"""

CAST = """
func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x3xi1>, %c: tensor<f64>, %d: tensor<3xi64>) -> (tensor<2x3xf32>, tensor<2x3xi1>, tensor<f64>, tensor<3xi64>) {
  return %a, %b, %c, %d : tensor<2x3xf32>, tensor<2x3xi1>, tensor<f64>, tensor<3xi64>
}
"""


class ArraysTest(unittest.TestCase):
    """Arrays cross without copies where they can, and never share storage
    the caller could see change."""

    def setUp(self):
        self.x = np.random.default_rng(4).standard_normal((64, 256)).astype(np.float32)
        self.u = np.full((2, 2), 7, np.float32)

    def test_inputs_are_only_read_and_results_are_their_own(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "x.npy")
            np.save(path, self.x)
            # Mapped read-only: a write into it would kill the process.
            x = np.load(path, mmap_mode="r")
            for numerics in ("reference", "tpu"):
                (a, a2, updated, doubled), _ = tpusim.run(SHARED, x, self.u, numerics=numerics)
                np.testing.assert_array_equal(x, self.x)
                np.testing.assert_array_equal(a, self.x)
                want = self.x.copy()
                want[1:3, 1:3] = 7
                np.testing.assert_array_equal(updated, want)
                np.testing.assert_array_equal(doubled, 2 * self.x)
                # Results that are an input, or each other, are copies.
                for r in (a, a2, updated, doubled):
                    self.assertFalse(np.shares_memory(r, x))
                    self.assertTrue(r.flags.writeable)
                self.assertFalse(np.shares_memory(a, a2))
                a[0, 0] = 99
                self.assertEqual(a2[0, 0], self.x[0, 0])
                # Each array holds tensor storage of its own.
                for r in (a, a2, updated, doubled):
                    self.assertEqual(type(r.base).__name__, "PyCapsule")
                (squared,), _ = tpusim.run(UPDATE, x, self.u, numerics=numerics)
                np.testing.assert_array_equal(x, self.x)
                np.testing.assert_array_equal(squared, want * want)
            del x, a, a2, updated, doubled, squared

    def test_any_layout_byte_order_and_dtype_numpy_has(self):
        a = np.arange(6, dtype=np.float32).reshape(2, 3)
        b = np.array([[True, False, True], [False, True, True]])
        d = [3, -1, 2 ** 40]
        for x in (a, np.asfortranarray(a), a.astype(">f4"),
                  np.arange(12, dtype=np.float32).reshape(2, 6)[:, ::2] / 2 * 1):
            (ra, rb, rc, rd), _ = tpusim.run(CAST, x, b, np.float64(2.5), d,
                                             numerics="reference")
            np.testing.assert_array_equal(ra, x)
            self.assertEqual(ra.dtype, np.float32)
            np.testing.assert_array_equal(rb, b)
            self.assertEqual(rb.dtype, np.bool_)
            self.assertEqual(rc.shape, ())
            self.assertEqual(float(rc), 2.5)
            np.testing.assert_array_equal(rd, np.array(d, np.int64))
        # Read-only memory of another object's.
        raw = np.frombuffer(a.tobytes(), np.float32).reshape(2, 3)
        (ra, _, _, _), _ = tpusim.run(CAST, raw, b, 0.0, d, numerics="reference")
        np.testing.assert_array_equal(ra, a)
        with self.assertRaisesRegex(tpusim.Error, r"^input 0: numpy dtype '<U1' is not supported$"):
            tpusim.run(CAST, np.array([["a"] * 3] * 2), b, 0.0, d)
        with self.assertRaisesRegex(tpusim.Error, r"^input 1: numpy dtype '\|O' is not supported$"):
            tpusim.run(CAST, a, np.array([[None] * 3] * 2, dtype=object), 0.0, d)

    def test_runs_on_many_threads(self):
        results = {}

        def one(k):
            x = np.full((64, 256), k, np.float32)
            results[k] = tpusim.run(SHARED, x, self.u, numerics="reference")[0][3]

        threads = [threading.Thread(target=one, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for k in range(4):
            np.testing.assert_array_equal(results[k], np.full((64, 256), 2 * k, np.float32))


class ErrorTest(unittest.TestCase):

    def test_parse_error_has_the_clis_message(self):
        bad = "module {\n  func.func @main() {\n    %0 = stablehlo.bogus : tensor<f32>\n"
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "bad.mlir")
            with open(path, "w") as f:
                f.write(bad)
            r = subprocess.run([TPUSIM, "run", path, "--timing-only", "--no-cache"],
                               capture_output=True, text=True)
            self.assertNotEqual(r.returncode, 0)
            with self.assertRaises(tpusim.Error) as e:
                tpusim.time(path)
        message = str(e.exception)
        self.assertEqual("tpusim: " + message, r.stderr.strip())
        self.assertRegex(message, r"^.*bad\.mlir:3:\d+: ")
        self.assertIsInstance(e.exception, RuntimeError)
        with self.assertRaisesRegex(tpusim.Error, r"^<program>:3:\d+: "):
            tpusim.time(bad)

    def test_wrong_arguments(self):
        with self.assertRaisesRegex(tpusim.Error, "takes 2 arguments, given 1"):
            tpusim.run(MATMUL, np.zeros((64, 32), np.float32))
        with self.assertRaisesRegex(tpusim.Error, r"tensor<64x32xf32>"):
            tpusim.run(MATMUL, np.zeros((3, 3), np.float32), np.zeros((32, 16), np.float32))

    def test_unknown_chip_and_options(self):
        with self.assertRaisesRegex(tpusim.Error, "v99"):
            tpusim.time(MATMUL, chip="v99")
        with self.assertRaisesRegex(tpusim.Error, "numerics"):
            tpusim.time(MATMUL, numerics="fast")
        with self.assertRaises(TypeError):
            tpusim.time(42)

    def test_a_missing_file_is_not_read_as_program_text(self):
        with self.assertRaisesRegex(FileNotFoundError, "cannot open nope.mlir"):
            tpusim.run("nope.mlir", np.zeros((64, 32), np.float32))
        # One line of program text is still text.
        report = tpusim.time("func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> { "
                             "%y = stablehlo.add %x, %x : tensor<4xf32> "
                             "return %y : tensor<4xf32> }")
        self.assertGreater(report.total_seconds, 0)


class ChipsTest(unittest.TestCase):

    def test_presets(self):
        chips = {c["name"]: c for c in tpusim.chips()}
        self.assertIn("v5e", chips)
        self.assertIn("v2", chips)
        self.assertAlmostEqual(chips["v5e"]["peak_bf16_flops_per_s"] / 1e12, 197, delta=1)
        self.assertGreater(chips["v5p"]["hbm_bytes"], chips["v5e"]["hbm_bytes"])


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)

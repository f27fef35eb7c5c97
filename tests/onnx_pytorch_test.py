#!/usr/bin/python3
"""PyTorch as a real client of tpusim's ONNX front end.

Each test builds a small model with random weights (torch.manual_seed fixed),
exports it with torch.onnx.export (opsets 13 to 17) into its own temporary
directory, runs

    tpusim run model.onnx --numerics reference --input in0.npy ... --output-dir out

and compares out/result<K>.npy with PyTorch's K-th output (the exporter
flattens nested tuples such as LSTM's (output, (h, c)) in order):

  float outputs  max|tpusim - torch| <= 1e-4 * max(1, max|torch|): one bound
                 on the output's scale rather than per element, since a
                 relative bound per element means nothing where an output
                 crosses zero, and an absolute one nothing for large logits;
  int outputs    exactly (argmax);
  both           the same shape and dtype.

Models: torchvision's resnet18, mobilenet_v2 and squeezenet1_1 on 1x3x64x64
(batch norms given random statistics), an nn.TransformerEncoder (d_model 64,
4 heads, 2 layers, batch_first), the GPT-style decoder of
scripts/onnx_export_examples.py (int64 token ids, hand-written causal
attention with a triu mask; run at another batch and length than exported),
a 2-layer nn.LSTM and a bidirectional nn.GRU, a model exported with a dynamic
batch axis (run at batch 3, and with --timing-only --arg-shape), and one with
int64 index inputs (index_select, gather, embedding) and an argmax output.
Opsets: 13 (resnet18, LSTM, indices), 14 and 17 (GPT: LayerNorm decomposed,
then LayerNormalization), 15 (mobilenet_v2, GRU), 16 (squeezenet1_1, dynamic
batch), 17 (TransformerEncoder, exported with autograd on: with it off,
PyTorch 1.13's fused fast path has no ONNX export). The error paths: an op
in an unknown domain must exit 3 with one line on
stderr naming the node; a truncated .onnx file must exit non-zero with one
line on stderr and write no result.

PyTorch's results are also saved as torch_result<K>.npy beside each run's
output directory; TPUSIM_KEEP=1 keeps the temporary directories.

Usage: /usr/bin/python3 tests/onnx_pytorch_test.py TPUSIM_BINARY [unittest options]
Needs torch, torchvision and onnx (Debian: python3-torch, python3-torchvision,
python3-onnx).
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import warnings

import numpy as np
import onnx
import torch
import torch.nn as nn
import torchvision

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "scripts"))
import onnx_export_examples as examples  # noqa: E402  (TinyGPT, randomize_batch_norms)

TPUSIM = None  # set from argv in __main__
RTOL = 1e-4
RUN_TIMEOUT = 300  # seconds, per tpusim run


def flatten(value):
    """A model's outputs as a flat list of numpy arrays, in export order."""
    if isinstance(value, (tuple, list)):
        return [a for v in value for a in flatten(v)]
    return [value.detach().numpy()]


class OnnxPyTorchTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="tpusim_onnx_torch_")
        self.runs = 0
        torch.manual_seed(0)

    def tearDown(self):
        if os.environ.get("TPUSIM_KEEP"):
            print(f"\n  kept {self.dir}", file=sys.stderr)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)

    # -------------------------------------------------------------- helpers

    def export(self, model, args, opset, input_names, output_names, dynamic_axes=None,
               name="model", grad=False):
        path = os.path.join(self.dir, f"{name}.onnx")
        with torch.set_grad_enabled(grad), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the tracer's notes on Python values
            torch.onnx.export(model, tuple(args), path, opset_version=opset,
                              input_names=input_names, output_names=output_names,
                              dynamic_axes=dynamic_axes)
        return path

    def tpusim(self, *args):
        return subprocess.run([TPUSIM, "run", *args], capture_output=True, text=True,
                              errors="replace", timeout=RUN_TIMEOUT, stdin=subprocess.DEVNULL)

    def run_dir(self):
        self.runs += 1
        d = os.path.join(self.dir, f"run{self.runs}")
        os.makedirs(d)
        return d

    def run_model(self, path, inputs, expected=()):
        """Runs path on inputs (numpy arrays); returns the result arrays.

        expected (PyTorch's results) is only saved beside the run, for a
        person looking at a kept directory.
        """
        work = self.run_dir()
        args = [path, "--numerics", "reference"]
        for i, array in enumerate(inputs):
            npy = os.path.join(work, f"in{i}.npy")
            np.save(npy, array)
            args += ["--input", npy]
        for k, array in enumerate(expected):
            np.save(os.path.join(work, f"torch_result{k}.npy"), array)
        out = os.path.join(work, "out")
        proc = self.tpusim(*args, "--output-dir", out)
        self.assertEqual(proc.returncode, 0,
                         f"tpusim run {os.path.basename(path)} exited {proc.returncode}:\n"
                         f"{proc.stderr.strip()}")
        outputs = len(onnx.load(path, load_external_data=False).graph.output)
        results = []
        for k in range(outputs):
            result = os.path.join(out, f"result{k}.npy")
            self.assertTrue(os.path.exists(result), f"no result{k}.npy in {out}")
            results.append(np.load(result, allow_pickle=False))
        self.assertFalse(os.path.exists(os.path.join(out, f"result{outputs}.npy")),
                         f"more results than the graph's {outputs} outputs")
        return results

    def assert_matches(self, got, want, label):
        self.assertEqual(got.shape, want.shape, f"{label}: shape")
        self.assertEqual(got.dtype, want.dtype, f"{label}: dtype")
        if want.dtype.kind in "biu":
            bad = np.argwhere(got != want)
            self.assertEqual(len(bad), 0, f"{label}: {len(bad)} of {want.size} integers differ, "
                             f"first at {bad[:1].tolist()}")
            return
        a, b = got.astype(np.float64), want.astype(np.float64)
        self.assertTrue(np.all(np.isfinite(b)), f"{label}: PyTorch's result is not finite")
        err = float(np.max(np.abs(a - b))) if b.size else 0.0
        bound = RTOL * max(1.0, float(np.max(np.abs(b))) if b.size else 0.0)
        self.assertTrue(err <= bound,  # False for NaN too
                        f"{label}: max |tpusim - torch| = {err:.3g} > {bound:.3g}")

    def check(self, model, args, opset, input_names, output_names, dynamic_axes=None,
              run_args=None, grad=False):
        """Exports model at args and checks tpusim against PyTorch on run_args
        (default: args). grad: export and run PyTorch with autograd enabled."""
        model.eval()
        path = self.export(model, args, opset, input_names, output_names, dynamic_axes,
                           name=f"model_opset{opset}", grad=grad)
        run_args = args if run_args is None else run_args
        with torch.set_grad_enabled(grad):
            expected = flatten(model(*run_args))
        results = self.run_model(path, [a.numpy() for a in run_args], expected)
        self.assertEqual(len(results), len(expected), "outputs")
        for k, (got, want) in enumerate(zip(results, expected)):
            self.assert_matches(got, want, f"opset {opset}, output {k} ({output_names[k]})")
        return path

    # -------------------------------------------------------------- CNNs

    def torchvision_model(self, factory):
        torch.manual_seed(0)
        model = factory(weights=None)
        examples.randomize_batch_norms(model)
        return model.eval()

    def test_resnet18(self):
        model = self.torchvision_model(torchvision.models.resnet18)
        self.check(model, [torch.randn(1, 3, 64, 64)], 13, ["x"], ["logits"])

    def test_mobilenet_v2(self):
        model = self.torchvision_model(torchvision.models.mobilenet_v2)
        self.check(model, [torch.randn(1, 3, 64, 64)], 15, ["x"], ["logits"])

    def test_squeezenet1_1(self):
        model = self.torchvision_model(torchvision.models.squeezenet1_1)
        self.check(model, [torch.randn(1, 3, 64, 64)], 16, ["x"], ["logits"])

    # -------------------------------------------------------------- sequences

    def test_transformer_encoder(self):
        layer = nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128,
                                           dropout=0.0, batch_first=True)
        model = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        # With autograd off, PyTorch 1.13's eval-mode layer takes its fused
        # fast path (aten::_transformer_encoder_layer_fwd), which the exporter
        # cannot write; with it on, the layer runs (and exports) op by op.
        self.check(model, [torch.randn(2, 10, 64)], 17, ["x"], ["y"], grad=True)

    def test_gpt_decoder(self):
        # Exported at 2x16 with dynamic batch and sequence axes, run at 3x9:
        # opset 14 decomposes LayerNorm, 17 has LayerNormalization.
        model = examples.tiny_gpt()
        export_tokens = torch.randint(0, 256, (2, 16), dtype=torch.int64)
        run_tokens = torch.randint(0, 256, (3, 9), dtype=torch.int64)
        axes = {"tokens": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}}
        for opset in (14, 17):
            with self.subTest(opset=opset):
                self.check(model, [export_tokens], opset, ["tokens"], ["logits"], axes,
                           run_args=[run_tokens])

    def test_lstm_two_layers(self):
        model = nn.LSTM(input_size=8, hidden_size=16, num_layers=2, batch_first=True)
        self.check(model, [torch.randn(2, 5, 8)], 13, ["x"], ["y", "h", "c"])

    def test_gru_bidirectional(self):
        model = nn.GRU(input_size=8, hidden_size=16, bidirectional=True)
        self.check(model, [torch.randn(6, 2, 8)], 15, ["x"], ["y", "h"])

    # -------------------------------------------------------------- shapes, indices

    def test_dynamic_batch(self):
        model = examples.tiny_cnn()
        axes = {"x": {0: "batch"}, "y": {0: "batch"}}
        path = self.check(model, [torch.randn(1, 3, 32, 32)], 16, ["x"], ["y"], axes,
                          run_args=[torch.randn(3, 3, 32, 32)])
        proc = self.tpusim(path, "--timing-only", "--arg-shape", "x=5x3x32x32")
        self.assertEqual(proc.returncode, 0, f"--timing-only exited {proc.returncode}:\n"
                         f"{proc.stderr.strip()}")
        self.assertIn("time", proc.stdout.lower(), "no timing report on stdout")

    def test_int64_index_inputs(self):
        class Indexing(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(20, 6)

            def forward(self, x, rows, cols):
                picked = torch.index_select(x, 0, rows)       # Gather
                gathered = torch.gather(picked, 1, cols)      # GatherElements
                embedded = self.emb(rows)                     # Gather on a weight
                return picked.argmax(dim=1), gathered, embedded.sum(-1)

        x = torch.randn(7, 9)
        rows = torch.tensor([4, 0, 6, 4, 2], dtype=torch.int64)
        cols = torch.randint(0, 9, (5, 3), dtype=torch.int64)
        self.check(Indexing(), [x, rows, cols], 13, ["x", "rows", "cols"],
                   ["argmax", "gathered", "embedded"])

    # -------------------------------------------------------------- errors

    def small_model(self):
        model = nn.Sequential(nn.Linear(4, 3), nn.ReLU()).eval()
        path = self.export(model, [torch.randn(2, 4)], 13, ["x"], ["y"], name="small")
        npy = os.path.join(self.dir, "x.npy")
        np.save(npy, np.ones((2, 4), np.float32))
        return path, npy

    def test_unsupported_op_exits_3(self):
        path, npy = self.small_model()
        model = onnx.load(path)
        graph = model.graph
        relu_out = graph.output[0].name
        graph.node.append(onnx.helper.make_node("Frobnicate", [relu_out], ["frobnicated"],
                                                name="frob_node",
                                                domain="com.example.tpusim_test"))
        graph.output[0].name = "frobnicated"
        model.opset_import.append(onnx.helper.make_opsetid("com.example.tpusim_test", 1))
        edited = os.path.join(self.dir, "unknown_op.onnx")
        onnx.save(model, edited)
        out = os.path.join(self.dir, "out_unknown")
        proc = self.tpusim(edited, "--numerics", "reference", "--input", npy, "--output-dir", out)
        self.assertEqual(proc.returncode, 3, f"stderr: {proc.stderr.strip()}")
        lines = proc.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, f"not one line on stderr: {proc.stderr!r}")
        self.assertIn("frob_node", lines[0])
        self.assertIn("Frobnicate", lines[0])

    def test_truncated_model(self):
        path, npy = self.small_model()
        truncated = os.path.join(self.dir, "truncated.onnx")
        with open(path, "rb") as f, open(truncated, "wb") as g:
            g.write(f.read(100))
        out = os.path.join(self.dir, "out_truncated")
        proc = self.tpusim(truncated, "--numerics", "reference", "--input", npy,
                           "--output-dir", out)
        self.assertGreater(proc.returncode, 0,
                           f"exit {proc.returncode} (0: accepted; < 0: killed by a signal)")
        lines = proc.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, f"not one line on stderr: {proc.stderr!r}")
        self.assertEqual(glob.glob(os.path.join(out, "*")), [], "files written")


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        sys.exit("usage: /usr/bin/python3 tests/onnx_pytorch_test.py TPUSIM_BINARY [unittest options]")
    TPUSIM = os.path.abspath(sys.argv[1])
    unittest.main(argv=[sys.argv[0]] + sys.argv[2:], verbosity=2)

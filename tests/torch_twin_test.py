#!/usr/bin/python3
"""The PyTorch twin of tpusim's train step (bench/torch_twin.py) against tpusim.

bench/torch_pairs.py times tpusim's train steps against the twin and checks
that they compute the same step; this test keeps the twin true as the model
builder changes, on tiny models that run in a second. Each case writes a
model TOML (2 layers, d_model 64, 4 heads of 16, vocab 128), emits its step
with `tpusim model --emit --batch 2 --seq 16 --dtype f32`, writes the
inputs the twin also reads (weights N(0, 0.02), norm gains 1 + N(0, 0.1),
uniform tokens), runs

    tpusim run step.mlir --numerics reference --input <each parameter> --output-dir out

and compares out/result<i>.npy with the twin's forward + backward + AdamW:
the loss within 1e-4 relative, and every updated parameter, first moment
and second moment within 1e-4 of its tensor's largest value (torch_twin.rel).
Each model runs twice: from zero first moments and second moments in
[1e-7, 1e-6] at step 10 (the new first moments are then 0.1 x the
gradients: a check of every gradient; torch_twin.make_inputs says why not
from zero second moments) and from random moments at step 5 (AdamW's moment
decay and bias correction).

Models: Llama-style (swiglu, rmsnorm, 2 kv heads for 4 query heads, untied
unembedding, no biases), GPT-style (gelu, layernorm, biases, learned
positions with more rows than the sequence, tied embeddings) and PaLM-style
(parallel layers, geglu, layernorm without biases).

Usage: /usr/bin/python3 tests/torch_twin_test.py TPUSIM_BINARY [unittest options]
Needs numpy and torch (Debian: python3-numpy, python3-torch). TPUSIM_KEEP=1
keeps the temporary directories.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "bench"))
import torch_twin as tt  # noqa: E402

TPUSIM = None  # set from argv in __main__
TOL = 1e-4
RUN_TIMEOUT = 120  # seconds, per tpusim command

COMMON = """layers = 2
d_model = 64
heads = 4
head_dim = 16
vocab = 128
"""
MODELS = {
    "llama": COMMON + """kv_heads = 2
d_ff = 128
mlp = "swiglu"
norm = "rmsnorm"
bias = false
tied_embeddings = false
position_embeddings = 0
max_seq = 16
""",
    "gpt": COMMON + """kv_heads = 4
d_ff = 256
mlp = "gelu"
norm = "layernorm"
bias = true
tied_embeddings = true
position_embeddings = 32
max_seq = 32
""",
    "palm": COMMON + """kv_heads = 4
d_ff = 128
mlp = "geglu"
norm = "layernorm"
bias = false
tied_embeddings = false
parallel_layers = true
position_embeddings = 0
max_seq = 16
""",
}


class TorchTwinTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="tpusim_torch_twin_")

    def tearDown(self):
        if os.environ.get("TPUSIM_KEEP"):
            print(f"\n  kept {self.dir}", file=sys.stderr)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)

    def tpusim(self, *args):
        proc = subprocess.run([TPUSIM, *args], capture_output=True, text=True, errors="replace",
                              timeout=RUN_TIMEOUT, stdin=subprocess.DEVNULL)
        self.assertEqual(proc.returncode, 0, f"tpusim {' '.join(args)}:\n{proc.stderr}")

    def check(self, model):
        toml = os.path.join(self.dir, f"{model}.toml")
        with open(toml, "w") as f:
            f.write(f'name = "{model}"\ndescription = "twin test"\nsources = ["test"]\n\n'
                    f"[architecture]\n{MODELS[model]}")
        mlir = os.path.join(self.dir, f"{model}.mlir")
        self.tpusim("model", "--file", toml, "--emit", mlir, "--batch", "2", "--seq", "16",
                    "--dtype", "f32")
        spec = tt.Spec(toml)
        with open(mlir) as f:
            sig = tt.signature(f.read())
        for moments, step in (("grad", 10), ("random", 5)):
            with self.subTest(moments=moments, step=step):
                arrays = tt.make_inputs(spec, sig, seed=7, step=step, moments=moments)
                run = os.path.join(self.dir, f"{model}_{moments}")
                paths = tt.write_inputs(arrays, sig, os.path.join(run, "inputs"))
                out = os.path.join(run, "out")
                self.tpusim("run", mlir, "--numerics", "reference", "--output-dir", out,
                            *[a for p in paths for a in ("--input", p)])
                twin = tt.Twin(spec, sig, "f32")
                twin.load(arrays)
                loss = twin.step()
                d = tt.compare(loss, twin.results(), tt.tpusim_results(sig, out))
                msg = f"{model}, {moments} moments, step {step}: {tt.format_diffs(d)}"
                print(f"\n  {msg}", file=sys.stderr)
                self.assertLessEqual(d["loss"], TOL, msg)
                for group in ("params", "m", "v"):
                    self.assertLessEqual(d[group][0], TOL, msg)

    def test_llama_style(self):
        self.check("llama")

    def test_gpt_style(self):
        self.check("gpt")

    def test_palm_style(self):
        self.check("palm")

    def test_signature_order(self):
        """The twin reads @main's parameters in order: params, m_, v_, step,
        tokens, targets, as EmitTrainStep documents them."""
        toml = os.path.join(self.dir, "gpt.toml")
        with open(toml, "w") as f:
            f.write(f'name = "gpt"\ndescription = "t"\nsources = ["t"]\n\n'
                    f"[architecture]\n{MODELS['gpt']}")
        mlir = os.path.join(self.dir, "gpt.mlir")
        self.tpusim("model", "--file", toml, "--emit", mlir, "--batch", "2", "--seq", "16",
                    "--dtype", "f32")
        with open(mlir) as f:
            names = [n for n, _, _ in tt.signature(f.read())]
        n = (len(names) - 3) // 3
        self.assertEqual(names[-3:], ["step", "tokens", "targets"])
        self.assertEqual(names[n:2 * n], ["m_" + p for p in names[:n]])
        self.assertEqual(names[2 * n:3 * n], ["v_" + p for p in names[:n]])
        self.assertIn("positions", names[:n])
        self.assertIn("final_norm_bias", names[:n])


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        sys.exit("usage: /usr/bin/python3 tests/torch_twin_test.py TPUSIM_BINARY [unittest options]")
    TPUSIM = os.path.abspath(sys.argv[1])
    unittest.main(argv=[sys.argv[0]] + sys.argv[2:], verbosity=2)

#!/usr/bin/env python3
"""Every command in the shell blocks of README.md, docs/*.md and
examples/*/README.md, run as a reader would paste it, so that none can rot.

Each document runs in its own scratch directory, in order, with the files its
commands name made first (see FIXTURES): `step.mlir` is the bundled MLP step,
`model.mlir` takes `a.npy` and `b.npy`, and so on. `examples/` and
`../shared` resolve as from the repository's root. A command must exit 0;
one written `$ command` followed by output must print that output (wrapped
anyhow; "..." ends it early), and fail when it is an error ("tpusim: ..."). The
Cloud TPU server a document starts runs in the background on a free port.

Python and JavaScript blocks run too (JavaScript with the test-only Node
client of tests/cloud_clients/node). Not run here, each with its reason: the
set-up commands (`.ci/run` and `scripts/check-fresh-install.sh` run those),
and Python that needs JAX, which Debian lacks (its outputs, f.mlir and the
.npy files, are fixtures).

In a sanitizer build (--sanitized) the `tpusim plan` commands are skipped:
searching meshes of 70B-parameter models takes tens of seconds in a release
build and over ten minutes instrumented; the release build's run covers them.

usage: docs_test.py TPUSIM REPO_ROOT [--python-path DIR] [--sanitized]
"""
import argparse
import glob
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import numpy as np

_parser = argparse.ArgumentParser()
_parser.add_argument("tpusim")
_parser.add_argument("root")
_parser.add_argument("--python-path", default="")
_parser.add_argument("--sanitized", action="store_true")
ARGS = _parser.parse_args([a for a in sys.argv[1:] if a])  # CMake passes unset flags as ""
TPUSIM, ROOT = os.path.abspath(ARGS.tpusim), os.path.abspath(ARGS.root)
PYTHONPATH = os.path.abspath(ARGS.python_path) if ARGS.python_path else ""
SHELL_LANGS = {"", "sh", "bash", "shell", "console"}
COMMAND = re.compile(r"^(tpusim [a-z]|mpirun |curl |export |scripts/)")
SETUP = {  # command -> the files that must run it
    "scripts/run-example.sh": ["scripts/check-fresh-install.sh"],
    "scripts/test.sh": [".ci/run", "scripts/check-fresh-install.sh"],
}

failures = []


def fail(where, message):
    failures.append(f"{where}: {message}")
    print(f"FAILED: {where}: {message}", flush=True)


# -- reading the documents ----------------------------------------------------

def blocks(path):
    """(line, language, text) of each fenced block of the file."""
    text = open(path).read()
    for m in re.finditer(r"^```(\w*)\n(.*?)^```", text, re.S | re.M):
        yield text[: m.start()].count("\n") + 2, m.group(1), m.group(2)


def commands(block):
    """(command, expected first output line or None) of a shell block, with
    continuation lines joined and trailing comments dropped."""
    lines, joined = block.splitlines(), []
    while lines:
        line = lines.pop(0)
        while line.endswith("\\") and lines:
            line = line[:-1] + " " + lines.pop(0).strip()
        joined.append(line)
    out = []
    for i, line in enumerate(joined):
        prompt = line.startswith("$ ")
        line = line[2:] if prompt else line
        if not COMMAND.match(line):
            continue
        command = re.sub(r"\s+# .*$", "", line).strip()
        expected = []
        for following in joined[i + 1:] if prompt else []:
            if following.startswith("$ "):
                break
            expected.append(following)
        out.append((command, " ".join(expected) or None))
    return out


# -- fixtures -----------------------------------------------------------------

def save(name, array):
    np.save(name, array)


def common_fixtures():
    shutil.copy(f"{ROOT}/examples/mlp_step.mlir", "step.mlir")
    shutil.copy(f"{ROOT}/examples/mlp_step.hlo", "step.hlo")
    shutil.copy(f"{ROOT}/examples/mlp_step.hlo", "model.hlo")
    shutil.copy(f"{ROOT}/examples/shape_poly/softmax.mlir", "poly.mlir")
    open("model.mlir", "w").write(
        "func.func @main(%arg0: tensor<4x8xf32>, %arg1: tensor<f32>) -> tensor<4x8xf32> {\n"
        "  %0 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<4x8xf32>\n"
        "  %1 = stablehlo.multiply %arg0, %0 : tensor<4x8xf32>\n"
        "  return %1 : tensor<4x8xf32>\n}\n")
    save("a.npy", np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32))
    save("b.npy", np.float32(0))


def readme_fixtures():
    # The training loop's state and data (examples/train_step/sgd.mlir), and
    # a JAX export f(x, w) of the same x and w.
    rng = np.random.default_rng(1)
    x = rng.standard_normal((256, 32)).astype(np.float32)
    save("x.npy", x)
    save("y.npy", (x @ rng.standard_normal(32) + 0.5).astype(np.float32))
    save("w.npy", np.zeros(32, np.float32))
    save("b.npy", np.float32(0))
    save("t.npy", np.int32(0))
    open("f.mlir", "w").write(
        "module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n"
        "  func.func public @main(%arg0: tensor<256x32xf32>, %arg1: tensor<32xf32>)"
        " -> (tensor<256xf32> {jax.result_info = \"\"}) {\n"
        "    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0]"
        " : (tensor<256x32xf32>, tensor<32xf32>) -> tensor<256xf32>\n"
        "    %1 = stablehlo.tanh %0 : tensor<256xf32>\n"
        "    return %1 : tensor<256xf32>\n  }\n}\n")


def compiler_fixtures():
    rng = np.random.default_rng(2)
    for name, shape in [("x", (16, 4)), ("w1", (4, 8)), ("b1", (8,)), ("w2", (8, 3))]:
        save(f"{name}.npy", rng.standard_normal(shape).astype(np.float32))
    open("tiny.toml", "w").write('base = "v5e"\nname = "tiny"\n[memory]\nhbm_bytes = 50000\n')


def spmd_fixtures():
    open("f.mlir", "w").write(
        "func.func @main(%x: tensor<16x32xf32>, %w: tensor<32x64xf32>) -> tensor<16x64xf32> {\n"
        "  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0]"
        " : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>\n"
        "  return %0 : tensor<16x64xf32>\n}\n")


def onnx_fixtures():
    # A model whose second node is of an op no one defines.
    import onnx
    from onnx import TensorProto, helper
    graph = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["a"], name="first"),
         helper.make_node("Frobnicate", ["a"], ["y"], name="second", domain="com.example")],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.example", 1)])
    onnx.save(model, "unknown.onnx")


def onnx_example_fixtures():
    save("tokens.npy", np.random.default_rng(4).integers(0, 256, (2, 16)).astype(np.int64))


FIXTURES = {"README.md": readme_fixtures, "docs/compiler.md": compiler_fixtures,
            "docs/onnx.md": onnx_fixtures, "examples/onnx/README.md": onnx_example_fixtures,
            "docs/spmd.md": spmd_fixtures}


# -- running ------------------------------------------------------------------

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Doc:
    """One document's scratch directory, environment and background server."""

    def __init__(self, doc, scratch):
        self.doc = doc
        self.home = os.path.join(scratch, "main")
        os.makedirs(self.home)
        os.symlink(os.path.join(ROOT, "examples"), os.path.join(self.home, "examples"))
        os.symlink(os.path.join(ROOT, "..", "shared"), os.path.join(scratch, "shared"))
        bin_dir = os.path.join(scratch, "bin")
        os.makedirs(bin_dir)
        os.symlink(TPUSIM, os.path.join(bin_dir, "tpusim"))
        self.port = free_port()
        self.env = dict(os.environ, PATH=bin_dir + ":" + os.environ["PATH"], HOME=self.home,
                        XDG_CACHE_HOME=os.path.join(self.home, "cache"),
                        TPUSIM_CLOUD_ENDPOINT=f"http://127.0.0.1:{self.port}",
                        PYTHONPATH=PYTHONPATH)
        self.env.pop("XDG_CONFIG_HOME", None)
        # As tests/mpi_test.sh runs mpirun: as root in CI, in a container.
        self.env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                        OMPI_MCA_btl_vader_single_copy_mechanism="none")
        self.server = None

    def __enter__(self):
        os.chdir(self.home)
        common_fixtures()
        FIXTURES.get(self.doc, lambda: None)()
        return self

    def __exit__(self, *exc):
        if self.server:
            self.server.terminate()
            self.server.wait()

    def run(self, where, command, expected):
        command = command.replace("8470", str(self.port))
        if command.startswith("export "):
            name, _, value = command[len("export "):].partition("=")
            self.env[name] = value
            return
        if command.startswith("tpusim cloud serve"):
            return self.serve(where, command)
        env = self.env
        if command.startswith("mpirun "):
            # Open MPI's plugins leak past MPI_Finalize (tests/mpi_test.sh).
            leaks = "detect_leaks=0"
            env = dict(env, ASAN_OPTIONS=":".join(filter(None, [env.get("ASAN_OPTIONS"), leaks])))
        if ARGS.sanitized and command.startswith("tpusim plan "):
            print(f"   skip  {where}: {command} (sanitized build)", flush=True)
            return
        start = time.time()
        try:
            p = subprocess.run(["bash", "-c", command], env=env, capture_output=True, text=True,
                               timeout=600)
        except subprocess.TimeoutExpired:
            fail(where, f"{command}: no end in 600 s")
            return
        output = p.stdout + p.stderr
        print(f"{time.time() - start:6.2f} s  {where}: {command}", flush=True)
        if expected is None:
            if p.returncode != 0:
                fail(where, f"{command}: exit {p.returncode}: {output.strip()[-400:]}")
            return
        # The output shown, re-wrapped; "..." ends it early.
        shown = " ".join(expected.split()).removesuffix("...").strip()
        if shown not in " ".join(output.split()):
            fail(where, f"{command}: printed not {shown!r} but {output.strip()[-400:]!r}")
        if (p.returncode != 0) != expected.startswith("tpusim: "):
            fail(where, f"{command}: exit {p.returncode}")

    def serve(self, where, command):
        self.server = subprocess.Popen(["bash", "-c", "exec " + command], env=self.env,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    print(f"           {where}: {command} (in the background)", flush=True)
                    return
            if self.server.poll() is not None:
                break
            time.sleep(0.05)
        fail(where, f"{command}: the server did not start")

    def run_python(self, where, code):
        if "jax" in code:
            print(f"   skip  {where}: Python that needs JAX", flush=True)
            return
        if re.search(r"^\s*import\b.*\btpusim\b", code, re.M) and not PYTHONPATH:
            print(f"   skip  {where}: Python (the module is not built)", flush=True)
            return
        self.run_code(where, ["/usr/bin/python3", "-c"], code, self.env)

    def run_javascript(self, where, code):
        modules = os.path.join(ROOT, "tests", "cloud_clients", "node", "node_modules")
        if not os.path.isdir(modules):
            fail(where, f"no {modules}: run npm ci --prefix tests/cloud_clients/node")
            return
        self.run_code(where, ["node", "-e"], code, dict(self.env, NODE_PATH=modules))

    def run_code(self, where, interpreter, code, env):
        code = code.replace("8470", str(self.port))
        try:
            p = subprocess.run(interpreter + [code], env=env, capture_output=True, text=True,
                               timeout=600)
        except subprocess.TimeoutExpired:
            fail(where, f"{interpreter[0]}: no end in 600 s")
            return
        print(f"         {where}: {interpreter[0]}", flush=True)
        if p.returncode != 0:
            fail(where, f"{interpreter[0]}: exit {p.returncode}: "
                        f"{(p.stdout + p.stderr).strip()[-400:]}")


def main():
    docs = (["README.md"] + sorted(os.path.relpath(p, ROOT) for p in glob.glob(f"{ROOT}/docs/*.md"))
            + sorted(os.path.relpath(p, ROOT) for p in glob.glob(f"{ROOT}/examples/*/README.md")))
    ran = 0
    with tempfile.TemporaryDirectory() as work:
        for n, doc in enumerate(docs):
            with Doc(doc, os.path.join(work, str(n))) as d:
                for line, lang, block in blocks(os.path.join(ROOT, doc)):
                    where = f"{doc}:{line}"
                    if lang == "python":
                        d.run_python(where, block)
                        continue
                    if lang == "javascript":
                        d.run_javascript(where, block)
                        continue
                    if lang not in SHELL_LANGS:
                        continue
                    for command, expected in commands(block):
                        if command in SETUP:
                            for runner in SETUP[command]:
                                if command not in open(os.path.join(ROOT, runner)).read():
                                    fail(where, f"{command}: not run by {runner}")
                            continue
                        d.run(where, command, expected)
                        ran += 1
    if ran < 40:
        fail("docs", f"only {ran} commands found")
    print(f"{ran} commands, {len(failures)} failed")
    sys.exit(1 if failures else 0)


main()

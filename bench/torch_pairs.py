#!/usr/bin/python3
"""tpusim paired with NumPy and PyTorch on the same work, on this machine (issue 28).

Prints wall times and ratios reference_time / tpusim_time measured in one
run, beside the issue's targets (PASS/FAIL is informational: the bench
exits 0 unless something errors):

  matmul   N^3 in f32 and bf16: the whole `tpusim run mm.mlir --numerics
           reference --input a.npy --input b.npy --output-dir o` process
           against NumPy (f32) and torch.matmul on bf16 tensors (bf16) in
           this process; targets >= 0.5 at 2048^3, >= 0.8 at 4096^3.
           Each row also times the same process with a + b in place of the
           product, and the ratio it would reach with a product as fast as
           the reference's; and, where build/python holds tpusim's module,
           tpusim.run on the same arrays in this process, warm. The part
           starts with the time tpusim takes to start and exit alone
           (`tpusim --version`).
  tiny     the train step of a 25M Llama-style model (`tpusim model --emit`,
           4 layers, d_model 512, batch 4 x 256): tpusim's whole `run` with
           --input files against its PyTorch twin (bench/torch_twin.py,
           forward + backward + AdamW in this process), whose loss and
           updated parameters are checked against tpusim's; target >= 0.5.
           And --numerics tpu against --numerics reference on the same step:
           target tpu at most 1.5x slower.
  gpt2     the same for a GPT-2-small-shaped model (12 layers, d_model 768,
           12 heads, d_ff 3072, vocab 50257, gelu, layernorm, biases, learned
           positions, tied embeddings; batch 4 x 512).

Every side runs with the same thread count (--threads: torch.set_num_threads,
OMP_NUM_THREADS and OPENBLAS_NUM_THREADS, which tpusim inherits). tpusim's
times are the best of --repeats whole runs (--gpt2-repeats for GPT-2); its
compile cache is used as a user's second run would find it (each line says
whether the best run hit it; the matmuls have one untimed run first). The
references are timed between tpusim's runs, best taken, so that the load of
a shared machine weighs on both sides alike. Peak RSS is the child's
ru_maxrss, which Linux carries over from this process across the child's
exec: a run smaller than the bench (about 250 MB with PyTorch loaded) shows
the bench's. The twin's checks: the loss within 1e-4 relative and each updated
parameter within 1e-4 of its tensor's largest value in f32 (a failure is an
error); in bf16 and TPU numerics the differences are printed.

  /usr/bin/python3 bench/torch_pairs.py                      # everything
  /usr/bin/python3 bench/torch_pairs.py --only matmul
  /usr/bin/python3 bench/torch_pairs.py --only tiny --dtypes f32 --numerics reference
  /usr/bin/python3 bench/torch_pairs.py --only gpt2 --gpt2-repeats 1 --numerics reference
"""

import argparse
import os
import subprocess
import sys


def parse_args():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tpusim", default=os.path.join(here, "..", "build", "tpusim"),
                    help="the tpusim binary (default: build/tpusim)")
    ap.add_argument("--only", default="matmul,tiny,gpt2",
                    help="comma-separated parts: matmul, tiny, gpt2 (default: all)")
    ap.add_argument("--repeats", type=int, default=3,
                    help="timed runs of each measurement, best taken (default 3)")
    ap.add_argument("--gpt2-repeats", type=int, default=2,
                    help="timed tpusim runs of each GPT-2 step (default 2: a shared host's "
                         "load swings one run by a third; 15-30 s each)")
    ap.add_argument("--threads", type=int, default=2, help="threads on every side (default 2)")
    ap.add_argument("--sizes", default="2048,4096", help="matmul sizes N (default 2048,4096)")
    ap.add_argument("--dtypes", default="f32,bf16", help="train step activations: f32, bf16")
    ap.add_argument("--numerics", default="reference,tpu",
                    help="train step numerics: reference, tpu (default both)")
    ap.add_argument("--work-dir", default="/tmp/tpusim_torch_pairs",
                    help="programs, inputs, outputs and tpusim's logs (default %(default)s)")
    ap.add_argument("--keep", action="store_true",
                    help="keep the .npy inputs and outputs (GPT-2's take ~8 GB); by default "
                         "only the programs and logs stay")
    return ap.parse_args()


def openblas_fallback_core():
    """The OpenBLAS kernels for this CPU's vector width when OpenBLAS does not
    know the CPU and would fall back to its generic Prescott ones (0.3.21 on
    Sapphire and Emerald Rapids: NumPy's f32 product 8x slower than it can
    be), else None. Asked of a child, since OpenBLAS reads
    OPENBLAS_CORETYPE once, when it loads."""
    probe = subprocess.run(
        [sys.executable, "-c", "import numpy"], capture_output=True, text=True,
        env=dict(os.environ, OPENBLAS_VERBOSE="2"))
    if "Core: Prescott" not in probe.stderr:
        return None
    with open("/proc/cpuinfo") as f:
        flags = next((l.split(":", 1)[1].split() for l in f if l.startswith("flags")), [])
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= set(flags):
        return "SkylakeX"
    return "Haswell" if "avx2" in flags else None


ARGS = parse_args()
# Before NumPy and torch load their thread pools; tpusim inherits them.
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(ARGS.threads)
# The references at their best: NumPy's and PyTorch's f32 products are OpenBLAS's.
CHOSEN_CORE = None if "OPENBLAS_CORETYPE" in os.environ else openblas_fallback_core()
if CHOSEN_CORE:
    os.environ["OPENBLAS_CORETYPE"] = CHOSEN_CORE

import ctypes  # noqa: E402
import gc  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_twin as tt  # noqa: E402

torch.set_num_threads(ARGS.threads)

MODELS = {
    # /var/tmp/spd/tiny.toml of issue 28: 25M parameters.
    "tiny": dict(batch=4, seq=256, toml="""name = "tiny"
description = "25M Llama-style (issue 28)"
sources = ["bench"]

[architecture]
layers = 4
d_model = 512
heads = 8
kv_heads = 8
head_dim = 64
d_ff = 2048
vocab = 8192
mlp = "swiglu"
norm = "rmsnorm"
bias = false
tied_embeddings = false
position_embeddings = 0
max_seq = 256
"""),
    "gpt2": dict(batch=4, seq=512, toml="""name = "gpt2-small"
description = "GPT-2 small shaped, as tpusim's GPT-3 parts build it"
sources = ["bench"]

[architecture]
layers = 12
d_model = 768
heads = 12
kv_heads = 12
head_dim = 64
d_ff = 3072
vocab = 50257
mlp = "gelu"
norm = "layernorm"
bias = true
tied_embeddings = true
position_embeddings = 1024
max_seq = 1024
"""),
}

ERRORS = []
SUMMARY = []


def say(line=""):
    print(line, flush=True)


def verdict(ok):
    return "PASS" if ok else "FAIL"


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def blas_info():
    """NumPy's BLAS as loaded: its library and OpenBLAS's own config."""
    with open("/proc/self/maps") as f:
        libs = sorted({l.split()[-1] for l in f if "blas" in l.split()[-1]})
    info = ", ".join(libs) or "none found in /proc/self/maps"
    for path in libs:
        try:
            lib = ctypes.CDLL(path)
            cfg, core = lib.openblas_get_config, lib.openblas_get_corename
            cfg.restype = core.restype = ctypes.c_char_p
            return (f"{info}\n  OpenBLAS config: {cfg().decode()}; core {core().decode()}; "
                    f"threads {lib.openblas_get_num_threads()}")
        except (OSError, AttributeError):
            continue
    return info


def aten_capability():
    m = re.search(r"CPU capability usage: (\w+)", torch.__config__.show())
    return f"CPU capability {m.group(1)}" if m else "CPU capability unknown"


def header():
    tpusim = os.path.abspath(ARGS.tpusim)
    version = subprocess.run([tpusim, "--version"], capture_output=True, text=True).stdout.strip()
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    rev = subprocess.run(["git", "-C", repo, "log", "-1", "--format=%h %s"], capture_output=True,
                         text=True).stdout.strip()
    say(f"machine: {cpu_name()}, {os.cpu_count()} CPUs, load average "
        f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    built = time.strftime("%Y-%m-%d %H:%M", time.localtime(os.path.getmtime(tpusim)))
    say(f"tpusim: {tpusim} ({version}, built {built}); tree at {rev[:90]}")
    say(f"threads: {ARGS.threads} (torch.get_num_threads() = {torch.get_num_threads()}, "
        f"OMP_NUM_THREADS = OPENBLAS_NUM_THREADS = {ARGS.threads}, inherited by tpusim)")
    coretype = os.environ.get("OPENBLAS_CORETYPE")
    say(f"NumPy {np.__version__}, BLAS: {blas_info()}")
    say(f"  OPENBLAS_CORETYPE = {coretype!r}" +
        ("" if coretype is None else " (forces OpenBLAS's kernels: NumPy's f32 times depend on it)") +
        ("; set by the bench: OpenBLAS took this CPU for a Prescott" if CHOSEN_CORE else ""))
    say(f"PyTorch {torch.__version__}, oneDNN (mkldnn) {torch.backends.mkldnn.is_available()}, "
        f"ATen {aten_capability()}")
    say()


class Run:
    """One finished tpusim process: wall time, peak RSS, log, exit status."""

    def __init__(self, wall, rss_kb, log, rc):
        self.wall, self.rss_kb, self.log, self.rc = wall, rss_kb, log, rc

    def cache(self):
        m = re.search(r"^compile: .*?\((cache[^)]*)\)", self.log, re.M)
        return m.group(1) if m else "cache ?"

    def error(self):
        lines = [l for l in self.log.splitlines() if l.strip()]
        return lines[-1] if lines else f"exit status {self.rc}"


def run_tpusim(args, log_path):
    """Runs tpusim with `args` to completion; its output goes to log_path."""
    with open(log_path, "w") as log:
        t0 = time.perf_counter()
        proc = subprocess.Popen([os.path.abspath(ARGS.tpusim)] + args, stdout=log,
                                stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
    with open(log_path) as log:
        text = log.read()
    return Run(wall, usage.ru_maxrss, text, proc.returncode)


def best_runs(args, log_path, repeats, between=None):
    """The best of `repeats` runs (with every run's wall time in .all and the
    largest peak RSS in .peak_rss_kb), or (None, the failed run). `between`
    is called after each run: the reference measured between tpusim's runs,
    so that a change in the machine's load reaches both sides alike."""
    runs = []
    for _ in range(repeats):
        r = run_tpusim(args, log_path)
        if r.rc != 0:
            return None, r
        runs.append(r)
        if between:
            between()
    best = min(runs, key=lambda r: r.wall)
    best.all = [r.wall for r in runs]
    best.peak_rss_kb = max(r.rss_kb for r in runs)
    return best, None


def best_time(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def mb(kb):
    return f"{kb / 1024:.0f} MB"


def fail(what, run):
    msg = f"{what}: tpusim failed: {run.error()}"
    ERRORS.append(msg)
    say(msg)


# -- matmuls -------------------------------------------------------------------


def matmul_program(n, dtype, op="dot_general"):
    t = f"tensor<{n}x{n}x{dtype}>"
    dims = " contracting_dims = [1] x [0]" if op == "dot_general" else ""
    return (f"func.func @main(%a: {t}, %b: {t}) -> {t} {{\n"
            f"  %0 = stablehlo.{op} %a, %b,{dims} : ({t}, {t}) -> {t}\n"
            f"  return %0 : {t}\n}}\n")


def process_floor(n, dtype, d, pa, pb):
    """The best wall time of the same whole process without the product (a
    + b on the same files: start, read, convert, write, exit)."""
    prog = os.path.join(d, f"add{n}_{dtype}.mlir")
    with open(prog, "w") as f:
        f.write(matmul_program(n, dtype, "add"))
    args = ["run", prog, "--numerics", "reference", "--input", pa, "--input", pb,
            "--output-dir", os.path.join(d, f"o{n}_{dtype}_add")]
    log = os.path.join(d, f"add{n}_{dtype}.log")
    run_tpusim(args, log)
    best, bad = best_runs(args, log, ARGS.repeats)
    if bad:
        fail(f"matmul {n}^3 {dtype} without the product", bad)
        return None
    return best.wall


def tpusim_module():
    """tpusim's Python module built beside the binary (build/python), or None."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(ARGS.tpusim)), "python"))
    try:
        import tpusim
        return tpusim
    except ImportError as e:
        say(f"   (no in-process tpusim: {e})")
        return None
    finally:
        sys.path.pop(0)


def in_process(module, prog, a, b, ref_time, name):
    """tpusim.run on the same program and arrays in this process, warm: the
    product without the process around it."""
    if module is None:
        return
    run = lambda: module.run(prog, a, b, numerics="reference")  # noqa: E731
    run()
    t = best_time(run, ARGS.repeats)
    say(f"  in this process, tpusim.run (import tpusim): {t:.4f} s (best of {ARGS.repeats}): "
        f"{name}/tpusim {ref_time / t:.3f}")


def bench_matmuls():
    say("== matmul: whole `tpusim run` process vs in-process NumPy (f32) / PyTorch (bf16) ==")
    say("   (inputs f32 .npy; tpusim converts them to the bf16 parameters; one untimed run first)")
    d = os.path.join(ARGS.work_dir, "matmul")
    os.makedirs(d, exist_ok=True)
    start = min(run_tpusim(["--version"], os.path.join(d, "version.log")).wall for _ in range(5))
    say(f"   tpusim's start and exit alone (tpusim --version): {start:.4f} s (best of 5)")
    rng = np.random.default_rng(0)
    module = tpusim_module()
    for n in [int(s) for s in ARGS.sizes.split(",")]:
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        pa, pb = os.path.join(d, f"a{n}.npy"), os.path.join(d, f"b{n}.npy")
        np.save(pa, a)
        np.save(pb, b)
        target = 0.5 if n <= 2048 else 0.8
        for dtype in ("f32", "bf16"):
            prog = os.path.join(d, f"mm{n}_{dtype}.mlir")
            with open(prog, "w") as f:
                f.write(matmul_program(n, dtype))
            out = os.path.join(d, f"o{n}_{dtype}")
            args = ["run", prog, "--numerics", "reference", "--input", pa, "--input", pb,
                    "--output-dir", out]
            log = os.path.join(d, f"mm{n}_{dtype}.log")
            first = run_tpusim(args, log)
            if first.rc != 0:
                fail(f"matmul {n}^3 {dtype}", first)
                continue
            if dtype == "f32":
                name, fn = "NumPy", lambda: a @ b
            else:
                name = "PyTorch"
                ta, tb = torch.from_numpy(a).bfloat16(), torch.from_numpy(b).bfloat16()
                fn = lambda: torch.matmul(ta, tb)  # noqa: E731
            ref_times = [best_time(fn, 2)]
            best, bad = best_runs(args, log, ARGS.repeats,
                                  between=lambda: ref_times.append(best_time(fn, 2)))
            if bad:
                fail(f"matmul {n}^3 {dtype}", bad)
                continue
            ref_time = min(ref_times)
            ref = fn()
            ref = ref if dtype == "f32" else ref.float().numpy()
            err = tt.rel(np.load(os.path.join(out, "result0.npy")), ref)
            ratio = ref_time / best.wall
            line = (f"matmul {n}^3 {dtype:4s}: tpusim {best.wall:7.3f} s (best of "
                    f"{len(best.all)}, first {first.wall:.3f} s, {best.cache()}, peak RSS "
                    f"{mb(best.peak_rss_kb)}), {name} {ref_time:.4f} s (best of "
                    f"{2 * len(ref_times)}): ratio {ratio:.3f} "
                    f"(target >= {target}: {verdict(ratio >= target)}); max|diff|/max|ref| {err:.1e}")
            say(line)
            floor = process_floor(n, dtype, d, pa, pb)
            if floor is not None:
                # What the ratio could reach with a product as fast as the
                # reference's, inside this process.
                say(f"  the same process without the product (a + b): {floor:.3f} s; "
                    f"ratio at most {ref_time / (ref_time + floor):.3f} with {name}'s product")
            in_process(module, prog, a, b, ref_time, name)
            SUMMARY.append(f"matmul {n}^3 {dtype}: {name}/tpusim {ratio:.3f} "
                           f"(>= {target}: {verdict(ratio >= target)})")
            del ref
            if not ARGS.keep:
                shutil.rmtree(out, ignore_errors=True)
                shutil.rmtree(out + "_add", ignore_errors=True)
        if not ARGS.keep:
            os.remove(pa)
            os.remove(pb)
    say()


# -- train steps ------------------------------------------------------------------


def emit(toml, dtype, batch, seq, path):
    r = subprocess.run([os.path.abspath(ARGS.tpusim), "model", "--file", toml, "--emit", path,
                        "--batch", str(batch), "--seq", str(seq), "--dtype", dtype],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"tpusim model --emit failed: {r.stderr.strip()}")
    with open(path) as f:
        return tt.signature(f.read())


class TwinTimes:
    """The twin's step timed from the same state each time; its loss and
    results kept from the first."""

    def __init__(self, spec, sig, dtype, arrays):
        self.spec, self.sig, self.dtype, self.arrays = spec, sig, dtype, arrays
        self.times, self.loss, self.res = [], None, None

    def once(self):
        twin = tt.Twin(self.spec, self.sig, self.dtype)
        twin.load(self.arrays)
        gc.collect()
        t0 = time.perf_counter()
        loss = twin.step()
        self.times.append(time.perf_counter() - t0)
        if self.res is None:
            self.loss, self.res = loss, twin.results()
        del twin
        gc.collect()

    def best(self):
        return min(self.times)


def model_header(key, spec, m, repeats):
    say(f"== train step {key}: {spec.layers} layers, d_model {spec.d_model}, {spec.heads} heads "
        f"of {spec.head_dim}, d_ff {spec.d_ff}, vocab {spec.vocab}, {spec.mlp}/{spec.norm}"
        f"{', biases' if spec.bias else ''}{', learned positions' if spec.positions else ''}"
        f"{', tied' if spec.tied else ''}; batch {m['batch']} x {m['seq']} ==")
    say(f"   tpusim: whole `run` with --input .npy files, best of {repeats}; PyTorch twin: "
        f"forward + backward + AdamW in-process, best of {repeats + 1}, its runs between "
        f"tpusim's")


def bench_model(key):
    m = MODELS[key]
    d = os.path.join(ARGS.work_dir, key)
    os.makedirs(d, exist_ok=True)
    toml = os.path.join(d, "model.toml")
    with open(toml, "w") as f:
        f.write(m["toml"])
    spec = tt.Spec(toml)
    repeats = ARGS.gpt2_repeats if key == "gpt2" else ARGS.repeats
    model_header(key, spec, m, repeats)
    dtypes = ARGS.dtypes.split(",")
    numerics = ARGS.numerics.split(",")
    sigs = {dt: emit(toml, dt, m["batch"], m["seq"], os.path.join(d, f"step_{dt}.mlir"))
            for dt in dtypes}
    sig = sigs[dtypes[0]]
    nparams = sum(int(np.prod(s)) for n, s, _ in sig
                  if n not in ("step", "tokens", "targets") and not n.startswith(("m_", "v_")))
    say(f"   {nparams / 1e6:.1f}M parameters; inputs: weights N(0, 0.02), gains 1 + N(0, 0.1), "
        f"m zero (new m = 0.1 x gradient), v uniform in [1e-7, 1e-6], step 10, tokens and "
        f"targets uniform")
    arrays = tt.make_inputs(spec, sig, seed=0, step=10, moments="grad")
    paths = tt.write_inputs(arrays, sig, os.path.join(d, "inputs"))
    inputs = [a for p in paths for a in ("--input", p)]
    kept = {}  # by dtype: both sides' loss and new first moments (0.1 x the gradients)
    for dt in dtypes:
        if [s[:2] for s in sigs[dt]] != [s[:2] for s in sig]:
            raise RuntimeError(f"{key}: the {dt} step's parameters differ from the {dtypes[0]} one's")
        twin = TwinTimes(spec, sig, dt, arrays)
        twin.once()  # its first step also warms PyTorch's allocator and oneDNN
        say(f"{key} {dt}: PyTorch twin loss {twin.loss:.7g}, first step {twin.times[0]:.3f} s")
        runs = {n: [] for n in numerics}
        failed = {}
        for rep in range(repeats):
            for n in numerics:
                if n in failed:
                    continue
                r = run_tpusim(["run", os.path.join(d, f"step_{dt}.mlir"), "--numerics", n,
                                "--output-dir", os.path.join(d, f"out_{dt}_{n}")] + inputs,
                               os.path.join(d, f"run_{dt}_{n}.log"))
                say(f"   run {rep + 1} --numerics {n}: {r.wall:.2f} s, peak RSS {mb(r.rss_kb)}")
                if r.rc != 0:
                    failed[n] = r
                else:
                    runs[n].append(r)
            twin.once()
        say(f"   PyTorch twin: {', '.join(f'{t:.2f}' for t in twin.times)} s")
        ref_wall = None
        for n in numerics:
            what = f"{key} {dt} --numerics {n}"
            if n in failed:
                fail(what, failed[n])
                continue
            best = min(runs[n], key=lambda r: r.wall)
            res = tt.tpusim_results(sig, os.path.join(d, f"out_{dt}_{n}"))
            ratio = twin.best() / best.wall
            say(f"{what}: tpusim {best.wall:.3f} s ({best.cache()}, peak RSS "
                f"{mb(max(r.rss_kb for r in runs[n]))}), loss {float(res['loss']):.7g}; PyTorch "
                f"{twin.best():.3f} s; torch/tpusim {ratio:.3f} (target >= 0.5: "
                f"{verdict(ratio >= 0.5)})")
            diffs = tt.compare(twin.loss, twin.res, res)
            if n == "reference":
                ref_wall = best.wall
                kept[dt] = {side: {k: v for k, v in r.items() if k == "loss" or k.startswith("m_")}
                            for side, r in (("tpusim", res), ("PyTorch", twin.res))}
                kept[dt]["PyTorch"]["loss"] = np.array(twin.loss)
                check = ""
                if dt == "f32":
                    ok = diffs["loss"] <= 1e-4 and diffs["params"][0] <= 1e-4
                    check = f" (loss and params within 1e-4: {verdict(ok)})"
                    if not ok:
                        ERRORS.append(f"{what}: the twin differs from tpusim: "
                                      f"{tt.format_diffs(diffs)}")
                say(f"   twin vs tpusim: {tt.format_diffs(diffs)}{check}")
                SUMMARY.append(f"{key} {dt} reference: torch/tpusim {ratio:.3f} "
                               f"(>= 0.5: {verdict(ratio >= 0.5)}), twin's loss rel diff "
                               f"{diffs['loss']:.1e}")
            else:
                say(f"   twin vs tpusim tpu numerics: {tt.format_diffs(diffs)}")
                line = f"{key} {dt} {n}: torch/tpusim {ratio:.3f}"
                if ref_wall:
                    slow = best.wall / ref_wall
                    say(f"   {n}/reference wall {slow:.2f}x (target <= 1.5: {verdict(slow <= 1.5)})")
                    line += f", {n}/reference {slow:.2f}x (<= 1.5: {verdict(slow <= 1.5)})"
                SUMMARY.append(line)
            del res
            gc.collect()
        del twin
        gc.collect()
    if not ARGS.keep:
        for name in os.listdir(d):
            if name == "inputs" or name.startswith("out_"):
                shutil.rmtree(os.path.join(d, name), ignore_errors=True)
    if "f32" in kept and "bf16" in kept:
        say(f"{key}: bf16 activations against f32, each side against itself (gradients: the new m):")
        for side in ("tpusim", "PyTorch"):
            a, b = kept["bf16"][side], kept["f32"][side]
            floor = 1e-4 * max(float(np.max(np.abs(b[n]))) for n in b if n != "loss")
            rels = sorted((tt.rel(a[n], b[n], floor), n) for n in b if n != "loss")
            say(f"   {side:7s}: loss rel {abs(float(a['loss']) / float(b['loss']) - 1):.1e}; "
                f"gradients rel, per tensor: median {rels[len(rels) // 2][0]:.1e}, max "
                f"{rels[-1][0]:.1e} ({rels[-1][1][2:]})")
    say()


def main():
    header()
    parts = ARGS.only.split(",")
    for part in parts:
        if part not in ("matmul", "tiny", "gpt2"):
            sys.exit(f"--only: unknown part '{part}' (matmul, tiny, gpt2)")
    t0 = time.perf_counter()
    if "matmul" in parts:
        bench_matmuls()
    for key in ("tiny", "gpt2"):
        if key in parts:
            bench_model(key)
    say("== summary (ratios: reference time / tpusim time; higher is better for tpusim) ==")
    for line in SUMMARY:
        say("  " + line)
    say(f"bench wall time {time.perf_counter() - t0:.0f} s")
    if ERRORS:
        say("errors:")
        for e in ERRORS:
            say("  " + e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""ONNX's backend test suite against `tpusim run`.

Runs every case of ONNX's backend test data as Debian's libonnx-testdata
ships it (/usr/share/libonnx-testdata/data/{node,pytorch-converted,
pytorch-operator,simple,real}; ONNX 1.12). A case is a directory with
model.onnx and test_data_set_N/ directories of input_K.pb / output_K.pb
TensorProtos. For each data set the inputs become .npy files in a temporary
directory, and

    tpusim run CASE/model.onnx --numerics reference --input input_0.npy ... \
        --output-dir OUT

runs the model; OUT/result<K>.npy is compared with output_K.pb the way ONNX's
own backend test compares (onnx.backend.test.runner). Sequences and
optionals (SequenceProto, OptionalProto files) go as tpusim run takes them
(src/runtime/onnx_program.h): a sequence input as a folder of its elements'
.npy files, an absent optional input as the word `none`; a sequence output
comes back as OUT/result<K>_<J>.npy, one per element, and an absent optional
output as no file. Values are compared: floats with
|actual - expected| <= atol + rtol * |expected|, rtol=1e-3, atol=1e-7 (the
real/ models name their own in data.json); NaN where and only where the
expected value is NaN; integers, booleans and strings exactly; the shape and
the dtype exactly. Strings go to tpusim as numpy 'U' arrays; bfloat16 values
(UINT16 bit patterns in ONNX's test data) go and are compared as float32, the
way tpusim reads and writes bfloat16 in .npy files.

A case is
  pass         every output of every data set matches;
  fail         tpusim exited 0 with a wrong or missing result, exited with
               another status than 0 or 3 (the reason is its error line), or
               ran past --timeout;
  unsupported  tpusim exited 3 (the reason is its error line, which names the
               op), or the runner itself cannot pass the case to the CLI
               (reason "runner: ..."): a graph input or output that is a
               map, a sparse tensor, or a sequence or optional of those or
               of sequences, which .npy files cannot hold;
  skipped      nothing to run: real/ ships only data.json, which names a
               model to download.
A failing case whose test data is off gets a "[test data: ...]" note: an
input whose shape is not the one its model declares, or a known error of
ONNX 1.12's data (DATA_NOTES).

The op of a case, for the per-op table, is the op type of its graph's nodes
when the (top-level) graph has one op kind. Otherwise it is the op type whose
name, lower-cased, equals the longest run of leading words of the test's
name joined without underscores (test_reduce_log_sum_exp_do_not_keepdims ->
ReduceLogSumExp, test_sce_mean_expanded -> SoftmaxCrossEntropyLoss through
the aliases in ALIASES); failing that, the test's name without "test_".

The share of passing cases is given over the standard ai.onnx domain: a case
with a node (subgraphs included) in ai.onnx.preview.training (training ops)
or ai.onnx.ml (classical ML ops) is still run and listed, but left out of it,
as not in the inference scope; so are skipped cases.

Usage:
  /usr/bin/python3 scripts/onnx_conformance.py [--tpusim build/tpusim]
      [--data DIR] [--filter REGEX] [--jobs N] [--timeout S]
      [--markdown FILE] [--json FILE] [--list-failures] [--min-pass FRACTION]
      [--tpusim-arg ARG ...] [--verbose]

--filter matches "suite/test_name" (re.search). The last line printed is a
one-line summary. The exit status is 0, or 1 when --min-pass is given and the
share of ai.onnx cases passing is below it, or 2 for bad arguments.

Needs numpy and onnx (Debian: python3-numpy, python3-onnx, libonnx-testdata).
"""
import argparse
import collections
import concurrent.futures
import datetime
import glob
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import numpy_helper

DEFAULT_DATA = "/usr/share/libonnx-testdata/data"
SUITES = ["node", "pytorch-converted", "pytorch-operator", "simple", "real"]
RTOL, ATOL = 1e-3, 1e-7  # onnx.backend.test.loader's defaults

# Domains whose cases are run but not counted in the ai.onnx share.
EXCLUDED_DOMAINS = {
    "ai.onnx.preview.training": "training ops, not in the inference scope",
    "ai.onnx.ml": "classical-ML ops (ai.onnx.ml), not in the inference scope",
}

# Test-name abbreviations of op types (lower case, no underscores).
ALIASES = {
    "sce": "SoftmaxCrossEntropyLoss",
    "softmaxcrossentropy": "SoftmaxCrossEntropyLoss",
    "nllloss": "NegativeLogLikelihoodLoss",
    "mvn": "MeanVarianceNormalization",
    "batchnorm": "BatchNormalization",
    "instancenorm": "InstanceNormalization",
    "strnormalizer": "StringNormalizer",
    "simplernn": "RNN",
    "greaterequal": "GreaterOrEqual",
    "lessequal": "LessOrEqual",
}

# Notes on the test data itself, added to the reason when such a case fails.
DATA_NOTES = {
    "test_cast_FLOAT_to_BFLOAT16":
        "ONNX 1.12's expected values are the inputs truncated to bfloat16, not rounded",
    "test_castlike_FLOAT_to_BFLOAT16":
        "ONNX 1.12's expected values are the inputs truncated to bfloat16, not rounded",
    "test_castlike_FLOAT_to_BFLOAT16_expanded":
        "ONNX 1.12's expected values are the inputs truncated to bfloat16, not rounded",
}

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


# ---------------------------------------------------------------- the cases

class Case:
    def __init__(self, suite, name, path):
        self.suite, self.name, self.path = suite, name, path

    @property
    def id(self):
        return f"{self.suite}/{self.name}"


def find_cases(data, pattern):
    cases = []
    for suite in SUITES:
        root = os.path.join(data, suite)
        if not os.path.isdir(root):
            continue
        for name in sorted(os.listdir(root)):
            path = os.path.join(root, name)
            if os.path.isdir(path):
                case = Case(suite, name, path)
                if pattern is None or re.search(pattern, case.id):
                    cases.append(case)
    return cases


def all_nodes(graph):
    """The graph's nodes and, recursively, those of its subgraphs."""
    for node in graph.node:
        yield node
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from all_nodes(attr.g)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for g in attr.graphs:
                    yield from all_nodes(g)


def known_op_types():
    """Lower-case op type -> op type, from ONNX's schemas (ai.onnx first)."""
    ops = {}
    schemas = sorted(onnx.defs.get_all_schemas_with_history(),
                     key=lambda s: s.domain not in ("", "ai.onnx"))
    for s in schemas:
        ops.setdefault(s.name.lower(), s.name)
    return ops


KNOWN_OPS = known_op_types()


def op_of(name, graph):
    """The op a case counts under (see the module docstring)."""
    kinds = sorted({n.op_type for n in graph.node}) if graph is not None else []
    if len(kinds) == 1:
        return kinds[0]
    stem = name[5:] if name.startswith("test_") else name
    words = stem.split("_")
    for k in range(len(words), 0, -1):
        joined = "".join(words[:k]).lower()
        if joined in ALIASES:
            return ALIASES[joined]
        if joined in KNOWN_OPS:
            return KNOWN_OPS[joined]
    return stem


# ---------------------------------------------------------------- comparison

def shape_str(shape):
    return "x".join(str(d) for d in shape) if len(shape) else "scalar"


def compare(actual, expected, rtol=RTOL, atol=ATOL):
    """None when actual matches expected, else a short reason."""
    if actual.shape != expected.shape:
        return f"shape {shape_str(actual.shape)}, expected {shape_str(expected.shape)}"
    if expected.dtype.kind in "OUS":
        if actual.dtype.kind not in "OUS":
            return f"dtype {actual.dtype}, expected strings"
        a = np.vectorize(str, otypes=[object])(actual) if actual.size else actual
        e = np.vectorize(str, otypes=[object])(expected) if expected.size else expected
        bad = a != e
        if np.any(bad):
            i = tuple(int(x) for x in np.argwhere(bad)[0])
            return (f"{int(np.sum(bad))} of {bad.size} strings differ "
                    f"(at {list(i)}: {a[i]!r}, expected {e[i]!r})")
        return None
    if actual.dtype != expected.dtype:
        return f"dtype {actual.dtype}, expected {expected.dtype}"
    if expected.dtype.kind in "biu":
        bad = actual != expected
        if np.any(bad):
            i = tuple(int(x) for x in np.argwhere(bad)[0])
            return (f"{int(np.sum(bad))} of {bad.size} elements differ "
                    f"(at {list(i)}: {actual[i]}, expected {expected[i]})")
        return None
    wide = np.complex128 if expected.dtype.kind == "c" else np.float64
    a, e = actual.astype(wide), expected.astype(wide)
    nan_a, nan_e = np.isnan(a), np.isnan(e)
    if np.any(nan_a != nan_e):
        return (f"NaN at {int(np.sum(nan_a & ~nan_e))} positions not NaN in the expected, "
                f"not NaN at {int(np.sum(nan_e & ~nan_a))} expected NaN")
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=True)
    if np.all(close):
        return None
    bad = ~close
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        err = np.abs(a - e)
        rel = err / np.abs(e)
    err_bad, rel_bad = err[bad], rel[bad]
    max_abs = float(np.nanmax(err_bad)) if np.any(~np.isnan(err_bad)) else float("nan")
    max_rel = float(np.nanmax(rel_bad)) if np.any(~np.isnan(rel_bad)) else float("nan")
    return (f"{int(np.sum(bad))} of {bad.size} elements beyond rtol={rtol:g} atol={atol:g}: "
            f"max abs err {max_abs:.3g}, max rel err {max_rel:.3g}")


# ---------------------------------------------------------------- running

def error_line(stderr):
    """tpusim's error line: the first 'error:' or 'tpusim:' line, else the last line."""
    lines = [l.strip() for l in stderr.splitlines() if l.strip()]
    for l in lines:
        if l.startswith(("error:", "tpusim:")):
            return l[:400]
    return lines[-1][:400] if lines else "(nothing on stderr)"


def type_kind(type_proto):
    kind = type_proto.WhichOneof("value")
    return {"tensor_type": "tensor", "sequence_type": "sequence",
            "optional_type": "optional", "map_type": "map",
            "sparse_tensor_type": "sparse tensor"}.get(kind, str(kind))


def value_kind(value_info):
    return type_kind(value_info.type)


def runner_takes(type_proto):
    """Whether the CLI takes or writes a value of this type: a tensor, a
    sequence of tensors, an optional of either."""
    kind = type_kind(type_proto)
    if kind == "optional":
        type_proto = type_proto.optional_type.elem_type
        kind = type_kind(type_proto)
    if kind == "sequence":
        kind = type_kind(type_proto.sequence_type.elem_type)
    return kind == "tensor"


def elem_type_of(type_proto):
    """The element type of the tensors a value of this type holds."""
    while type_kind(type_proto) in ("optional", "sequence"):
        type_proto = (type_proto.optional_type.elem_type if type_kind(type_proto) == "optional"
                      else type_proto.sequence_type.elem_type)
    return type_proto.tensor_type.elem_type


def static_shape(value_info):
    """The declared shape, None for unknown dims; None when there is none."""
    t = value_info.type.tensor_type
    if not t.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]


def shape_fits(shape, declared):
    return len(shape) == len(declared) and all(
        d is None or d == s for s, d in zip(shape, declared))


def article(word):
    return "an" if word[:1] in "aeiou" else "a"


def load_array(path, elem_type=None):
    """A TensorProto file as a numpy array: strings as a numpy 'U' array, and
    bfloat16 (elem_type, the graph's type of the value, or the file's own) as
    float32, the way tpusim reads and writes bfloat16 in .npy files. ONNX's
    test data stores bfloat16 as UINT16 bit patterns."""
    return array_of(onnx.load_tensor(path), elem_type)


def array_of(tensor, elem_type=None):
    """A TensorProto as load_array returns it."""
    if tensor.data_type == onnx.TensorProto.BFLOAT16:
        bits = np.array(tensor.int32_data, dtype=np.uint32) if not tensor.raw_data else \
            np.frombuffer(tensor.raw_data, dtype="<u2").astype(np.uint32)
        return (bits << 16).view(np.float32).reshape(tuple(tensor.dims))
    array = numpy_helper.to_array(tensor)
    if elem_type == onnx.TensorProto.BFLOAT16 and array.dtype == np.uint16:
        return (array.astype(np.uint32) << 16).view(np.float32)
    if array.dtype == object:
        array = np.array([b.decode() if isinstance(b, bytes) else str(b)
                          for b in array.flat], dtype=str).reshape(array.shape)
    return array


def load_value(path, type_proto):
    """A data file as a value of the graph's type: a numpy array (a tensor,
    load_array), a list of arrays (a sequence), None (an absent optional)."""
    kind = type_kind(type_proto)
    elem_type = elem_type_of(type_proto)
    with open(path, "rb") as f:
        data = f.read()
    if kind == "sequence":
        seq = onnx.SequenceProto()
        seq.ParseFromString(data)
        return [array_of(t, elem_type) for t in seq.tensor_values]
    if kind == "optional":
        opt = onnx.OptionalProto()
        opt.ParseFromString(data)
        if opt.HasField("sequence_value"):
            return [array_of(t, elem_type) for t in opt.sequence_value.tensor_values]
        return array_of(opt.tensor_value, elem_type) if opt.HasField("tensor_value") else None
    return load_array(path, elem_type)


def save_value(value, path):
    """`value` (load_value's) as tpusim run's --input takes it, at `path`
    (.npy added) for a tensor, `path` a folder of its elements for a
    sequence; returns the argument."""
    if value is None:
        return "none"
    if isinstance(value, list):
        os.makedirs(path)
        for j, array in enumerate(value):
            np.save(os.path.join(path, f"{j:06d}.npy"), array, allow_pickle=False)
        return path
    np.save(path + ".npy", value, allow_pickle=False)
    return path + ".npy"


def compare_result(out_dir, k, want, rtol, atol):
    """None when OUT/result<k>[_<j>].npy hold `want` (load_value's), else a
    short reason."""
    def exists(stem):
        return os.path.exists(os.path.join(out_dir, stem + ".npy"))

    def one(stem, array):
        if not exists(stem):
            return f"no {stem}.npy"
        try:
            got = np.load(os.path.join(out_dir, stem + ".npy"), allow_pickle=False)
        except Exception as e:  # a malformed .npy is tpusim's fault
            return f"{stem}.npy unreadable: {e}"
        return compare(got, array, rtol, atol)

    if want is None:
        if exists(f"result{k}") or exists(f"result{k}_0"):
            return "a value, expected an absent optional"
        return None
    if not isinstance(want, list):
        return one(f"result{k}", want)
    if exists(f"result{k}"):
        return f"a tensor, expected a sequence of {len(want)}"
    for j, array in enumerate(want):
        why = one(f"result{k}_{j}", array)
        if why:
            return f"element {j}: {why}"
    if exists(f"result{k}_{len(want)}"):
        return f"a sequence longer than {len(want)}"
    return None


class RunnerError(Exception):
    """A case the runner cannot pass to the CLI."""


def numbered(directory, prefix):
    files = glob.glob(os.path.join(directory, f"{prefix}_*.pb"))
    return sorted(files, key=lambda f: int(re.search(r"_(\d+)\.pb$", f).group(1)))


def run_case(case, opts):
    started = time.monotonic()
    result = {"suite": case.suite, "name": case.name, "op": None, "ops": [],
              "domains": [], "excluded": None, "status": None, "reason": None}

    notes = [DATA_NOTES[case.name]] if case.name in DATA_NOTES else []

    def done(status, reason=None):
        if status == "fail" and notes:
            reason = f"{reason} [test data: {'; '.join(notes)}]"
        result["status"], result["reason"] = status, reason
        result["seconds"] = round(time.monotonic() - started, 3)
        return result

    model_path = os.path.join(case.path, "model.onnx")
    if not os.path.exists(model_path):
        result["op"] = op_of(case.name, None)
        result["excluded"] = "not shipped: libonnx-testdata has only data.json, naming a download"
        return done("skipped", result["excluded"])
    model = onnx.load(model_path)
    graph = model.graph
    nodes = list(all_nodes(graph))
    result["ops"] = sorted({n.op_type for n in nodes})
    result["domains"] = sorted({n.domain or "ai.onnx" for n in nodes})
    result["op"] = op_of(case.name, graph)
    for domain, why in EXCLUDED_DOMAINS.items():
        if domain in result["domains"]:
            result["excluded"] = f"{domain}: {why}"
    rtol, atol = RTOL, ATOL
    data_json = os.path.join(case.path, "data.json")
    if os.path.exists(data_json):
        with open(data_json) as f:
            meta = json.load(f)
        rtol, atol = meta.get("rtol", rtol), meta.get("atol", atol)

    initializers = {t.name for t in graph.initializer}
    inputs = [v for v in graph.input if v.name not in initializers]
    for role, values in (("input", inputs), ("output", graph.output)):
        for v in values:
            if not runner_takes(v.type):
                kind = value_kind(v)
                return done("unsupported",
                            f"runner: graph {role} '{v.name}' is {article(kind)} {kind} of a type "
                            f"the CLI's .npy files cannot hold (tensors, sequences of tensors "
                            f"and optionals of either only)")

    data_sets = sorted(glob.glob(os.path.join(case.path, "test_data_set_*")))
    if not data_sets:
        return done("skipped", "no test_data_set_N directory")
    for data_set in data_sets:
        label = "" if len(data_sets) == 1 else f"{os.path.basename(data_set)}: "
        with tempfile.TemporaryDirectory(prefix="onnx_conf_") as tmp:
            try:
                in_files = numbered(data_set, "input")
                tensor = onnx.TypeProto()
                tensor.tensor_type.elem_type = onnx.TensorProto.UNDEFINED
                out_types = [v.type for v in graph.output]
                expected = [load_value(f, out_types[k] if k < len(out_types) else tensor)
                            for k, f in enumerate(numbered(data_set, "output"))]
                npys = []
                for k, f in enumerate(in_files):
                    value = load_value(f, inputs[k].type if k < len(inputs) else tensor)
                    declared = static_shape(inputs[k]) if k < len(inputs) else None
                    if (isinstance(value, np.ndarray) and declared is not None
                            and not shape_fits(value.shape, declared)):
                        notes.append(f"input '{inputs[k].name}' is {shape_str(value.shape)}, "
                                     f"the model declares {shape_str(declared)}")
                    npys.append(save_value(value, os.path.join(tmp, f"input_{k}")))
            except RunnerError as e:
                return done("unsupported", f"runner: {e}")
            if len(npys) != len(inputs):
                return done("fail", f"runner: {len(npys)} input files for {len(inputs)} graph inputs")
            out_dir = os.path.join(tmp, "out")
            cmd = [opts.tpusim, "run", model_path, "--numerics", "reference"]
            for npy in npys:
                cmd += ["--input", npy]
            cmd += ["--output-dir", out_dir] + opts.tpusim_arg
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                                      timeout=opts.timeout, stdin=subprocess.DEVNULL)
            except subprocess.TimeoutExpired:
                return done("fail", f"{label}timeout after {opts.timeout:g} s")
            if proc.returncode == 3:
                return done("unsupported", label + error_line(proc.stderr))
            if proc.returncode < 0:
                sig = signal.Signals(-proc.returncode).name
                return done("fail", f"{label}killed by {sig}: {error_line(proc.stderr)}")
            if proc.returncode != 0:
                return done("fail", f"{label}exit {proc.returncode}: {error_line(proc.stderr)}")
            for k, want in enumerate(expected):
                why = compare_result(out_dir, k, want, rtol, atol)
                if why:
                    name = graph.output[k].name if k < len(graph.output) else f"#{k}"
                    if why == f"no result{k}.npy":
                        return done("fail", f"{label}{why}")
                    return done("fail", f"{label}output {k} ({name}): {why}")
            extra = os.path.join(out_dir, f"result{len(expected)}")
            if os.path.exists(extra + ".npy") or os.path.exists(extra + "_0.npy"):
                return done("fail", f"{label}more results than the {len(expected)} outputs")
    return done("pass")


# ---------------------------------------------------------------- reports

def counted(r):
    """Whether a case counts in the ai.onnx share."""
    return r["excluded"] is None and r["status"] != "skipped"


def reason_group(reason):
    """A reason with what is particular to one case taken out, to group by."""
    r = re.sub(r"^(test_data_set_\d+: )", "", reason)
    r = re.sub(r"^(error|tpusim): ", "", r)
    r = re.sub(r"\S*\.onnx(:\d+)*:\s*", "", r)
    r = re.sub(r"\s*\(\S+\.npy\)", "", r)
    r = re.sub(r"(graph (input|output)|input) (%\S+|'[^']*')", r"\1", r)
    r = re.sub(r"'[^']*'", "'…'", r)  # value and node names
    r = re.sub(r"node '[^']*' \(([^)]*)\)", r"\1", r)
    r = re.sub(r"^output \d+ \([^)]*\): ", "", r)
    if re.search(r"elements beyond rtol", r):
        return "values beyond tolerance"
    if re.search(r"elements differ|strings differ", r):
        return "values differ"
    if re.match(r"shape ", r):
        return "wrong shape"
    if re.match(r"dtype ", r):
        return re.sub(r"^dtype (\S+), expected (\S+)", r"dtype \1 for \2", r)
    return r


def summarize_reasons(rows, limit=4):
    """'fail: A (2: test_x, test_y); unsupported: B (5)' for a table cell."""
    parts = []
    for status in ("fail", "unsupported"):
        groups = collections.OrderedDict()
        for r in rows:
            if r["status"] == status:
                groups.setdefault(reason_group(r["reason"]), []).append(r)
        items = []
        for reason, members in list(groups.items())[:limit]:
            names = ", ".join(m["name"].removeprefix("test_") for m in members[:2])
            more = "" if len(members) <= 2 else ", ..."
            if reason == "values beyond tolerance":
                worst = max((m["reason"] for m in members), key=_max_rel)
                errs = re.search(r"max abs err \S+ max rel err [^ \]]+", worst)
                reason += f", worst: {errs.group(0)}" if errs else ""
                note = re.search(r"\[test data: .*\]$", worst)
                reason += f" {note.group(0)}" if note else ""
            if len(reason) > 160:
                reason = reason[:157] + "..."
            items.append(f"{reason} ({len(members)}: {names}{more})")
        if len(groups) > limit:
            items.append(f"{len(groups) - limit} more reasons")
        if items:
            parts.append(f"{status}: " + "; ".join(items))
    return " / ".join(parts)


def _max_rel(reason):
    m = re.search(r"max rel err ([-+0-9.e]+|inf|nan)", reason)
    try:
        return float(m.group(1)) if m else 0.0
    except ValueError:
        return 0.0


def md_cell(text):
    return text.replace("|", "\\|").replace("\n", " ")


def totals(rows):
    c = collections.Counter(r["status"] for r in rows)
    return {s: c.get(s, 0) for s in ("pass", "fail", "unsupported", "skipped")}


def share(rows):
    scope = [r for r in rows if counted(r)]
    passed = sum(r["status"] == "pass" for r in scope)
    return passed, len(scope)


def pct(p, n):
    return f"{100.0 * p / n:.1f}%" if n else "n/a"


def write_markdown(path, rows, command, data):
    today = datetime.date.today().isoformat()
    out = ["# ONNX conformance", "",
           f"Generated by `{command}` on {today} from",
           f"`tpusim run --numerics reference` over ONNX {onnx.__version__}'s backend test data",
           f"(Debian's libonnx-testdata, `{data}`).",
           "Do not edit by hand; rerun the command.", "",
           "Outputs are compared as ONNX's backend test compares them: floats within",
           f"`|actual - expected| <= atol + rtol |expected|`, rtol={RTOL:g}, atol={ATOL:g};",
           "NaN exactly where expected; integers, booleans and strings exactly; shapes and",
           "dtypes exactly. Unsupported: tpusim exited 3 naming the op, or (\"runner:\") the",
           "case has map or sparse values, which the CLI's .npy inputs cannot hold.", "",
           "| suite | cases | passed | failed | unsupported | skipped |",
           "|---|---|---|---|---|---|"]
    for suite in SUITES + ["total"]:
        sel = rows if suite == "total" else [r for r in rows if r["suite"] == suite]
        if not sel:
            continue
        t = totals(sel)
        name = "**total**" if suite == "total" else suite
        out.append(f"| {name} | {len(sel)} | {t['pass']} | {t['fail']} | "
                   f"{t['unsupported']} | {t['skipped']} |")
    p, n = share(rows)
    pn, nn = share([r for r in rows if r["suite"] == "node"])
    out += ["", f"**Standard ai.onnx domain: {p} of {n} cases pass ({pct(p, n)})**; "
            f"the node (single-op) suite alone: {pn} of {nn} ({pct(pn, nn)}).", ""]
    excluded = collections.defaultdict(list)
    for r in rows:
        if not counted(r):
            excluded[r["excluded"] or r["reason"]].append(r)
    if excluded:
        out.append("Left out of that share (run and listed all the same, except the skipped):")
        out.append("")
        for why, members in sorted(excluded.items()):
            names = ", ".join(f"{m['suite']}/{m['name']}" for m in members)
            out.append(f"- {len(members)} case{'s' if len(members) != 1 else ''}, {why}: {names}")
        out.append("")
    out += ["## Per op", "",
            "A case's op is the op type of its graph's nodes when they are all of one",
            "kind; otherwise the op type whose name, lower-cased, is the longest run of",
            "leading words of the test's name joined (`test_reduce_log_sum_exp_...` ->",
            "ReduceLogSumExp), with the aliases `sce`, `nllloss`, `mvn`, `batchnorm`,",
            "`instancenorm`, `strnormalizer`, `simple_rnn`, `greater_equal` and",
            "`less_equal`; else the test's name. So a function op's `_expanded` case",
            "counts under that op. Skipped cases are not listed.", "",
            "| op | pass | fail | unsupported | not passing |",
            "|---|---|---|---|---|"]
    by_op = collections.defaultdict(list)
    for r in rows:
        if r["status"] != "skipped":
            by_op[r["op"]].append(r)
    for op in sorted(by_op, key=str.lower):
        sel = by_op[op]
        t = totals(sel)
        tag = "" if all(counted(r) for r in sel) else " \\*"
        out.append(f"| {md_cell(op)}{tag} | {t['pass']} | {t['fail']} | {t['unsupported']} | "
                   f"{md_cell(summarize_reasons(sel))} |")
    out += ["", "\\* not counted in the ai.onnx share (see above).", ""]
    with open(path, "w") as f:
        f.write("\n".join(out))


def summary_line(rows):
    t = totals(rows)
    p, n = share(rows)
    return (f"onnx conformance: {t['pass']} passed, {t['fail']} failed, "
            f"{t['unsupported']} unsupported, {t['skipped']} skipped of {len(rows)} cases; "
            f"ai.onnx {p}/{n} pass ({pct(p, n)})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tpusim", default=os.path.join(REPO, "build", "tpusim"),
                    help="tpusim binary (default: build/tpusim)")
    ap.add_argument("--data", default=DEFAULT_DATA, help=f"test data root (default {DEFAULT_DATA})")
    ap.add_argument("--filter", help="run only cases whose suite/name matches this regex")
    ap.add_argument("--jobs", "-j", type=int, default=2, help="cases run at once (default 2)")
    ap.add_argument("--timeout", type=float, default=60, help="seconds per tpusim run (default 60)")
    ap.add_argument("--markdown", help="write the docs table here")
    ap.add_argument("--json", help="write every case's result here")
    ap.add_argument("--list-failures", action="store_true",
                    help="print every case that does not pass, with its reason")
    ap.add_argument("--min-pass", type=float,
                    help="exit 1 when the share of ai.onnx cases passing is below this (0..1)")
    ap.add_argument("--tpusim-arg", action="append", default=[],
                    help="an extra argument for tpusim run (repeatable), e.g. --tpusim-arg=--no-cache")
    ap.add_argument("--verbose", "-v", action="store_true", help="print each case as it ends")
    opts = ap.parse_args()

    if not (os.path.isfile(opts.tpusim) and os.access(opts.tpusim, os.X_OK)):
        ap.error(f"no executable {opts.tpusim}; build first or pass --tpusim")
    if not os.path.isdir(opts.data):
        ap.error(f"no test data at {opts.data} (Debian: apt-get install libonnx-testdata)")
    if opts.filter:
        try:
            re.compile(opts.filter)
        except re.error as e:
            ap.error(f"--filter: {e}")
    opts.tpusim = os.path.abspath(opts.tpusim)
    cases = find_cases(opts.data, opts.filter)
    if not cases:
        ap.error("no case matches")

    rows = [None] * len(cases)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
        futures = {pool.submit(run_case, c, opts): i for i, c in enumerate(cases)}
        for future in concurrent.futures.as_completed(futures):
            i = futures[future]
            try:
                rows[i] = future.result()
            except Exception as e:  # a runner bug: report it as the case's failure
                rows[i] = {"suite": cases[i].suite, "name": cases[i].name,
                           "op": op_of(cases[i].name, None), "ops": [], "domains": [],
                           "excluded": None, "status": "fail",
                           "reason": f"runner: {type(e).__name__}: {e}", "seconds": 0}
            if opts.verbose:
                r = rows[i]
                print(f"{r['status'].upper():11} {cases[i].id} ({r['seconds']:.2f} s)"
                      + (f": {r['reason']}" if r["reason"] else ""), flush=True)

    command = "scripts/onnx_conformance.py" + "".join(" " + shlex.quote(a) for a in sys.argv[1:])
    if opts.markdown:
        write_markdown(opts.markdown, rows, command, opts.data)
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump({"command": command, "date": datetime.date.today().isoformat(),
                       "data": opts.data, "onnx": onnx.__version__, "rtol": RTOL, "atol": ATOL,
                       "totals": totals(rows), "ai_onnx_share": share(rows), "cases": rows},
                      f, indent=1)
            f.write("\n")
    if opts.list_failures:
        for r in rows:
            if r["status"] in ("fail", "unsupported"):
                print(f"{r['status'].upper():11} {r['suite']}/{r['name']} [{r['op']}]: {r['reason']}")
    print(summary_line(rows))
    if opts.min_pass is not None:
        p, n = share(rows)
        if n == 0 or p / n < opts.min_pass:
            print(f"below --min-pass {opts.min_pass:g}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

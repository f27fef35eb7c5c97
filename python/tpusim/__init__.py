"""tpusim from Python: run StableHLO or XLA HLO programs on a simulated TPU.

    import numpy as np, tpusim
    results, report = tpusim.run("step.mlir", x, w, chip="v5e")
    print(report.total_seconds, report.mfu)

Programs are the text JAX, TensorFlow or PyTorch/XLA export (a path or the
text itself). Results come back as numpy arrays; bf16 and narrower float
results come back as float32, holding exactly the simulated values. Every
error tpusim reports raises tpusim.Error with the command line's message.
"""

import json
import os

import numpy as np

from . import _tpusim

Error = _tpusim.Error

__all__ = ["Error", "Report", "chips", "run", "time"]


class Report:
    """The timing report of one run: the figures `tpusim run` prints."""

    def __init__(self, text, json_text, trace, html_text=""):
        self._text = text
        self._json_text = json_text
        self._data = json.loads(json_text)
        self._trace = trace
        self._html = html_text

    @property
    def total_seconds(self):
        """Predicted wall time of the step, in seconds."""
        return self._data["total_seconds"]

    @property
    def mfu(self):
        """Model FLOPs utilization: achieved over peak bf16 FLOP/s."""
        return self._data["mfu"]

    @property
    def flops(self):
        return self._data["flops"]

    @property
    def hbm_bytes(self):
        return self._data["hbm_bytes"]

    @property
    def ops(self):
        """One dict per op: op, location, count, seconds, flops, unit, bound..."""
        return self._data["ops"]

    @property
    def data(self):
        """The whole JSON report as a dict (schema tpusim.report/1)."""
        return self._data

    def to_json(self):
        """The JSON report, as `tpusim run --report-json` writes it."""
        return self._json_text

    def trace(self):
        """The Perfetto/Chrome trace JSON; needs run(..., trace=True)."""
        if not self._trace:
            raise Error("no trace was recorded: pass trace=True")
        return self._trace

    def html(self, path=None):
        """The report as one self-contained HTML page of charts, as
        `tpusim run --report-html` writes it. With `path`, writes it there
        (whole or not at all) and returns the path; else returns the page."""
        if path is None:
            return self._html
        path = os.fspath(path)
        tmp = "%s.tmp.%d" % (path, os.getpid())
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(self._html)
            os.replace(tmp, path)
        except OSError as e:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise Error("cannot write %s: %s" % (path, e.strerror or e)) from None
        return path

    def __str__(self):
        return self._text

    def __repr__(self):
        return "<tpusim.Report total_seconds=%.6g mfu=%.4f>" % (self.total_seconds, self.mfu)


def _is_onnx(path):
    """Whether the file at `path` holds an ONNX model (read by tpusim itself)."""
    if path.endswith(".onnx"):
        return True
    with open(path, "rb") as f:
        head = f.read(64)
    return head[:1] == b"\x08" and b"\0" in head


def _program_text(program):
    """The program's text and the name errors give it; None for an ONNX model."""
    if isinstance(program, os.PathLike) or (
            isinstance(program, str) and "\n" not in program and os.path.isfile(program)):
        path = os.fspath(program)
        if _is_onnx(path):
            return None, path
        with open(path, encoding="utf-8") as f:
            return f.read(), path
    if not isinstance(program, str):
        raise TypeError("program must be text or a path, not %s" % type(program).__name__)
    # One line that is no program ("nope.mlir") names a file that is not there.
    if "\n" not in program and not _looks_like_program(program):
        raise FileNotFoundError("cannot open %s" % program)
    return program, "<program>"


def _looks_like_program(text):
    """Whether one line of text reads as StableHLO or XLA HLO."""
    words = text.split()
    return bool(words) and (words[0] in ("module", "func.func", "HloModule") or
                            "func.func" in text or text.lstrip().startswith("%"))


def _host_array(value, index):
    """`value` as an array in C order, which tpusim reads in place where it
    can (its dtype and byte order are tpusim's to check, as for .npy files)."""
    a = np.asarray(value)
    # bf16 and other ml_dtypes types are opaque to tpusim: widen them to
    # float32 (exactly) and let tpusim round back to the parameter's type.
    if a.dtype.kind == "V" or a.dtype.name in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
        try:
            a = a.astype(np.float32)
        except (TypeError, ValueError) as e:
            raise TypeError("input %d: dtype %s is not supported" % (index, a.dtype)) from e
    if not a.flags.c_contiguous:
        a = a.copy(order="C")
    return a


def _execute(program, arrays, chip, numerics, precision, slice, topology, chip_file, entry,
             timing_only, overlap, trace, arg_shapes=None):
    args = _tpusim.RunArgs()
    args.arg_shapes = ["%s=%s" % (name, "x".join(str(int(d)) for d in dims))
                       for name, dims in (arg_shapes or {}).items()]
    text, args.name = _program_text(program)
    if text is None:
        args.onnx_path = args.name
    else:
        args.text = text
    args.inputs = [_host_array(a, i) for i, a in enumerate(arrays)]
    args.chip = chip
    args.chip_file = chip_file or ""
    args.slice = slice or ""
    args.topology = topology or ""
    args.entry = entry or ""
    args.numerics = numerics
    args.precision = precision or ""
    args.timing_only = timing_only
    args.overlap = overlap
    args.trace = trace
    results, text, json_text, trace_text, html_text = _tpusim.run(args)
    return results, Report(text, json_text, trace_text, html_text)


def run(program, *arrays, chip="v5e", numerics="tpu", precision=None, slice=None,
        topology=None, chip_file=None, entry=None, overlap=True, trace=False):
    """Runs `program` on `arrays` and returns (results, report).

    program: StableHLO or XLA HLO text, or a path to a file holding it.
    arrays: one per parameter of the entry function (@main, else the only
        public one), converted to its type as .npy inputs are (floats rounded
        to narrower float types). They are read in place, not copied, where
        their layout allows: do not change them from another thread while
        the run goes on.
    chip: a preset (see chips()); chip_file: a TOML chip description instead.
    numerics: "tpu" (bf16 MXU passes, TPU rounding) or "reference" (exact).
    precision: override every dot/convolution: "default", "high", "highest".
    slice / topology: time on a pod slice ("v5p-128") or torus ("4x4").
    A shape-polymorphic program (jax.export with symbolic shapes) is
    refined for the arrays' shapes first.
    Returns a list of numpy arrays and a Report.
    """
    return _execute(program, arrays, chip, numerics, precision, slice, topology, chip_file,
                    entry, False, overlap, trace)


def time(program, chip="v5e", numerics="tpu", precision=None, slice=None, topology=None,
         chip_file=None, entry=None, overlap=True, trace=False, arg_shapes=None):
    """Times `program` from its shapes alone (no values) and returns a Report.

    arg_shapes: for a shape-polymorphic program, each dynamic parameter's
    dimensions by name, {"arg0": (8, 4)}.
    """
    _, report = _execute(program, (), chip, numerics, precision, slice, topology, chip_file,
                         entry, True, overlap, trace, arg_shapes)
    return report


def chips():
    """The chip presets: one dict each (name, description, peak_bf16_flops_per_s, ...)."""
    return _tpusim.chips()

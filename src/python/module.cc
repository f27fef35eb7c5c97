// _tpusim: the C++ side of the `tpusim` Python package (python/tpusim).
// Arrays cross without copies where they can: an input's numpy storage
// becomes the tensor's, read in place while the run holds a reference to
// the array, and a result's tensor storage becomes the numpy array's. Their
// dtypes follow the .npy rules of `tpusim run --input` and --output-dir
// (io/npy.h). Errors raise tpusim.Error with the message the command line
// prints.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "tpusim/hw/chip.h"
#include "tpusim/io/npy.h"
#include "tpusim/runtime/load.h"
#include "tpusim/runtime/run.h"

namespace py = pybind11;

namespace tpusim::python {
namespace {

// Every error tpusim reports; Python sees it as tpusim.Error, a RuntimeError.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

template <typename T>
T ValueOr(StatusOr<T> v) {
  if (!v.ok()) throw Error(v.status().message());
  return std::move(*v);
}

StatusOr<ops::EvalOptions> EvalOptionsOf(const std::string& numerics,
                                         const std::string& precision) {
  ops::EvalOptions o;
  if (numerics == "tpu") {
    o.numerics = ops::Numerics::kTpu;
  } else if (numerics != "reference") {
    return InvalidArgument("numerics must be 'tpu' or 'reference', not '" + numerics + "'");
  }
  if (precision.empty()) return o;
  o.override_precision = true;
  if (precision == "default") {
    o.precision = numerics::MatmulPrecision::kDefault;
  } else if (precision == "high") {
    o.precision = numerics::MatmulPrecision::kHigh;
  } else if (precision == "highest") {
    o.precision = numerics::MatmulPrecision::kHighest;
  } else {
    return InvalidArgument("precision must be 'default', 'high' or 'highest', not '" + precision +
                           "'");
  }
  return o;
}

struct RunArgs {
  std::string text, name;               // the program and what errors call it
  std::vector<py::array> inputs;        // C order, either byte order
  std::vector<std::string> arg_shapes;  // "NAME=DIMS", as --arg-shape takes them
  std::string onnx_path;                // an ONNX model's file, read here (not text)
  std::string chip, chip_file, slice, topology, entry, numerics, precision;
  bool timing_only = false, overlap = true, trace = false;
};

// Input `index` as a tensor over the array's own storage where io allows,
// holding a reference to the array until the last tensor sharing it is gone.
// That may be on a worker thread while the run has let the GIL go, so the
// reference is dropped under the GIL.
Tensor TensorOf(const py::array& a, size_t index) {
  if (!(a.flags() & py::array::c_style)) {
    throw Error("input " + std::to_string(index) + ": not a C-contiguous array");
  }
  std::string dtype = py::str(a.dtype().attr("str"));
  ir::Shape shape(a.shape(), a.shape() + a.ndim());
  PyObject* owner = a.ptr();
  Py_INCREF(owner);
  return ValueOr(io::FromNpyMemory(
      dtype, shape, static_cast<const uint8_t*>(a.data()),
      [owner] {
        py::gil_scoped_acquire gil;
        Py_DECREF(owner);
      },
      "input " + std::to_string(index)));
}

// Result `t` as a numpy array owning a tensor's storage: the result's own
// when no other tensor shares it (no input's, no other result's) and numpy
// has its type, else a copy, widened as .npy files widen types numpy lacks.
// A copy's storage, like any tensor's, comes from pages tpusim reuses, where
// a fresh numpy array would fault in new ones on every run.
py::array ArrayOf(Tensor t) {
  if (!t.type().is_tensor()) {
    throw Error("a result of type " + t.type().ToString() + " has no numpy array");
  }
  const ir::ElementType stored = io::NpyElementType(t.element());
  if (stored != t.element() || !t.unique_storage()) {
    Tensor copy = ValueOr(Tensor::AllocateUninitialized(ir::Type::Tensor(stored, t.shape())));
    {
      py::gil_scoped_release unlocked;  // widening a large result takes a while
      io::ToNpyElements(t, copy.mutable_raw());
    }
    t = std::move(copy);
  }
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  auto* kept = new Tensor(std::move(t));
  py::capsule base(kept, [](void* p) { delete static_cast<Tensor*>(p); });
  return py::array(py::dtype(io::NpyDtype(stored)), shape, kept->raw(), base);
}

// Returns (results as numpy arrays, text report, JSON report, trace, HTML page).
py::tuple Run(const RunArgs& a) {
  runtime::RunOptions o;
  o.chip = a.chip;
  o.chip_file = a.chip_file;
  o.slice = a.slice;
  o.topology = a.topology;
  o.entry = a.entry;
  o.timing_only = a.timing_only;
  o.arg_shapes = a.arg_shapes;
  o.overlap = a.overlap;
  if (a.trace) o.trace = "(in memory)";  // Execute keeps the trace itself
  o.report_html = "(in memory)";         // and the page, for Report.html
  o.eval = ValueOr(EvalOptionsOf(a.numerics, a.precision));
  std::vector<Tensor> args;
  for (size_t i = 0; i < a.inputs.size(); ++i) args.push_back(TensorOf(a.inputs[i], i));
  runtime::Execution e;
  {
    py::gil_scoped_release unlocked;  // a long run lets other Python threads go on
    // An ONNX model is lowered for the arrays' shapes, which then size it.
    auto module = a.onnx_path.empty() ? ValueOr(runtime::LoadModuleText(a.text, a.name))
                                      : ValueOr(runtime::LoadOnnxFor(a.onnx_path, args, a.arg_shapes));
    if (!a.onnx_path.empty()) o.arg_shapes.clear();
    e = ValueOr(runtime::Execute(std::move(module), std::move(args), o));
  }
  py::list results;
  for (Tensor& t : e.results) results.append(ArrayOf(std::move(t)));
  return py::make_tuple(results, e.text_report, e.json_report, e.trace, e.html_report);
}

py::list Chips() {
  py::list out;
  for (const hw::ChipSpec& c : hw::Presets()) {
    py::dict d;
    d["name"] = c.name;
    d["description"] = c.description;
    d["tensor_cores"] = c.tensor_cores;
    d["clock_hz"] = c.clock_hz;
    d["peak_bf16_flops_per_s"] = c.PeakBf16FlopsPerS();
    d["hbm_bytes"] = c.memory.hbm_bytes;
    d["hbm_bytes_per_s"] = c.memory.hbm_bytes_per_s;
    d["vmem_bytes"] = c.memory.vmem_bytes;
    d["sources"] = c.sources;
    out.append(d);
  }
  return out;
}

}  // namespace
}  // namespace tpusim::python

PYBIND11_MODULE(_tpusim, m) {
  using tpusim::python::RunArgs;
  m.doc() = "tpusim's C++ core; use the tpusim package";
  py::register_exception<tpusim::python::Error>(m, "Error", PyExc_RuntimeError);
  py::class_<RunArgs>(m, "RunArgs")
      .def(py::init<>())
      .def_readwrite("text", &RunArgs::text)
      .def_readwrite("name", &RunArgs::name)
      .def_readwrite("inputs", &RunArgs::inputs)
      .def_readwrite("arg_shapes", &RunArgs::arg_shapes)
      .def_readwrite("onnx_path", &RunArgs::onnx_path)
      .def_readwrite("chip", &RunArgs::chip)
      .def_readwrite("chip_file", &RunArgs::chip_file)
      .def_readwrite("slice", &RunArgs::slice)
      .def_readwrite("topology", &RunArgs::topology)
      .def_readwrite("entry", &RunArgs::entry)
      .def_readwrite("numerics", &RunArgs::numerics)
      .def_readwrite("precision", &RunArgs::precision)
      .def_readwrite("timing_only", &RunArgs::timing_only)
      .def_readwrite("overlap", &RunArgs::overlap)
      .def_readwrite("trace", &RunArgs::trace);
  m.def("run", &tpusim::python::Run, "runs a program; see tpusim.run");
  m.def("chips", &tpusim::python::Chips, "the chip presets");
}

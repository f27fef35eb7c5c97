// The ONNX front end: reads a serialized ONNX model (what torch.onnx.export
// and tf2onnx write) with the ONNX project's own messages and checker, and
// lowers its graph to tpusim's StableHLO ops, so that every later stage
// (compilation, both numerics, timing, --slice, the report) works on it as
// on a JAX export. docs/onnx.md lists the ops and their lowerings.
#ifndef TPUSIM_FRONTEND_ONNX_IMPORTER_H_
#define TPUSIM_FRONTEND_ONNX_IMPORTER_H_

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/ir/ir.h"
#include "tpusim/tensor/tensor.h"

namespace tpusim::frontend {

// A graph input that is not an initializer: its name, element type and
// dimensions, -1 where the model leaves one symbolic or unknown (then
// `dim_names` holds the symbol, e.g. "batch", or is empty).
struct OnnxInput {
  std::string name;
  ir::ElementType element = ir::ElementType::kF32;
  std::vector<int64_t> dims;
  std::vector<std::string> dim_names;
  // A sequence of such tensors, whose length a run fixes at import: @main
  // takes its elements as parameters of their own (OnnxElementName). Its
  // elements may be of any rank when it is not `ranked`.
  bool sequence = false;
  bool ranked = true;
  // An optional tensor or sequence, which a run may give as absent.
  bool optional = false;
};

struct OnnxImportOptions {
  // Shapes of graph inputs by name; required for an input with a symbolic
  // or unknown dimension, checked against the model for the others.
  std::map<std::string, ir::Shape> input_shapes;
  // The value of a graph input by name, for inputs a result's shape may
  // depend on (a Reshape's target, a TopK's k, a Range's limit): small
  // inputs are read at import, larger ones when a lowering needs them. The
  // program is then specialized to those values where shapes depend on
  // them, as XLA specializes a program to its shapes. Null: such inputs are
  // an error (a timing-only run).
  std::function<StatusOr<Tensor>(const std::string& name)> input_value;
  // The shapes of a sequence input's elements, in order, by input name: the
  // sequence's length at import. Required for each sequence input.
  std::map<std::string, std::vector<ir::Shape>> sequence_shapes;
  // Optional inputs that are absent (none): @main has no parameter for them.
  std::set<std::string> absent_inputs;
};

// Where a graph output is among @main's results: graph output `output`, or
// its element `element` when it is a sequence (one result per element). An
// absent optional output has no result.
struct OnnxResult {
  int output = 0;
  int64_t element = -1;  // -1: a tensor
};

// The SSA name @main gives the graph input `name`: its characters outside
// [A-Za-z0-9_] as '_' ("input.1" -> "input_1"), so that the program prints.
std::string OnnxValueName(const std::string& name);
// The SSA name of element k of the sequence input `name`: "seq_0", "seq_1".
std::string OnnxElementName(const std::string& name, int64_t k);

// Whether `bytes` look like a serialized ModelProto rather than program
// text: not text, and starting with the ir_version field.
bool LooksLikeOnnx(std::string_view bytes);

// The graph inputs of the model in `bytes` (read from `path`), in order.
StatusOr<std::vector<OnnxInput>> ReadOnnxInputs(std::string_view bytes, const std::string& path);

// Lowers the model to a module whose public @main takes the graph inputs
// (in order; initializers become constants; a sequence input as one
// parameter per element, an absent optional as none) and returns the graph
// outputs (a sequence as one result per element, an absent optional as
// none; `results`, when not null, says which is which).
// Tensors stored outside the model (external data) are read relative to
// `path`'s folder. Ops are located at `path:N:1`, N the node's 1-based
// position in its graph. Errors: kInvalidArgument for a malformed or
// invalid model (the checker's message), kUnimplemented naming the node, its
// op and the attribute or type tpusim does not support. The module is not
// verified; run verify::VerifyModule next.
StatusOr<std::unique_ptr<ir::Module>> ImportOnnx(std::string_view bytes, const std::string& path,
                                                 const OnnxImportOptions& options,
                                                 std::vector<OnnxResult>* results = nullptr);

}  // namespace tpusim::frontend

#endif  // TPUSIM_FRONTEND_ONNX_IMPORTER_H_

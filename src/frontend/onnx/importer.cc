// The ONNX importer's entry points: parse, check, read external data, then
// lower the main graph into @main (graph.cc, the ops in ops/*.cc).
#include "tpusim/frontend/onnx/importer.h"

#include <onnx/checker.h>

#include <filesystem>
#include <set>

#include "frontend/onnx/graph.h"
#include "frontend/onnx/tensor_proto.h"

namespace tpusim::frontend {
namespace {

using onnx_import::Graph;
using onnx_import::Lowered;
using onnx_import::ModelContext;

// The opsets tpusim lowers: what ONNX 1.12's checker knows. Lowerings
// refuse the old forms they do not read (opset 6's `broadcast` attribute).
constexpr int kMinOpset = 1;
constexpr int kMaxOpset = 17;

// One line of a checker message, which spans several ("==> Context: ...").
std::string OneLine(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

StatusOr<onnx::ModelProto> Parse(std::string_view bytes, const std::string& path) {
  onnx::ModelProto model;
  if (bytes.size() > static_cast<size_t>(INT32_MAX) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return InvalidArgument(path + ": not an ONNX model (its bytes do not parse as a ModelProto)");
  }
  if (!model.has_graph()) return InvalidArgument(path + ": the ONNX model has no graph");
  return model;
}

StatusOr<int> AiOnnxOpset(const onnx::ModelProto& model, const std::string& path) {
  for (const onnx::OperatorSetIdProto& id : model.opset_import()) {
    if (id.domain().empty() || id.domain() == "ai.onnx") {
      if (id.version() < kMinOpset || id.version() > kMaxOpset) {
        return Unimplemented(path + ": ai.onnx opset " + std::to_string(id.version()) +
                             " is not supported (tpusim reads opsets " + std::to_string(kMinOpset) +
                             " to " + std::to_string(kMaxOpset) + ")");
      }
      return static_cast<int>(id.version());
    }
  }
  return kMaxOpset;  // a model of other domains only
}

std::set<std::string> InitializerNames(const onnx::GraphProto& graph) {
  std::set<std::string> out;
  for (const onnx::TensorProto& t : graph.initializer()) out.insert(t.name());
  return out;
}

// The tensor type of a graph input: its own, a sequence's elements', an
// optional's element's.
StatusOr<const onnx::TypeProto::Tensor*> TensorTypeOf(const onnx::ValueInfoProto& v, OnnxInput* in,
                                                      const std::string& path) {
  const onnx::TypeProto* t = &v.type();
  if (t->has_optional_type()) {
    in->optional = true;
    t = &t->optional_type().elem_type();
  }
  if (t->has_sequence_type()) {
    in->sequence = true;
    t = &t->sequence_type().elem_type();
  }
  if (!t->has_tensor_type()) {
    return Unimplemented(path + ": graph input '" + v.name() +
                         "' is not a tensor, a sequence of tensors or an optional of either");
  }
  return &t->tensor_type();
}

StatusOr<std::vector<OnnxInput>> Inputs(const onnx::ModelProto& model, const std::string& path) {
  const std::set<std::string> initializers = InitializerNames(model.graph());
  std::vector<OnnxInput> out;
  for (const onnx::ValueInfoProto& v : model.graph().input()) {
    if (initializers.count(v.name()) > 0) continue;  // a default value: a constant
    OnnxInput in;
    in.name = v.name();
    TPUSIM_ASSIGN_OR_RETURN(const onnx::TypeProto::Tensor* t, TensorTypeOf(v, &in, path));
    StatusOr<ir::ElementType> e = onnx_import::ElementOfOnnx(t->elem_type());
    if (!e.ok())
      return Unimplemented(path + ": graph input '" + v.name() + "': " + e.status().message());
    in.element = *e;
    if (!t->has_shape()) {
      // A sequence's elements may differ in rank: each takes its own.
      if (in.sequence) {
        in.ranked = false;
        out.push_back(std::move(in));
        continue;
      }
      return Unimplemented(path + ": graph input '" + v.name() + "' has no rank");
    }
    for (const onnx::TensorShapeProto::Dimension& d : t->shape().dim()) {
      in.dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
      in.dim_names.push_back(d.has_dim_param() ? d.dim_param() : "");
    }
    out.push_back(std::move(in));
  }
  return out;
}

std::string DimsText(const OnnxInput& in) {
  std::string s;
  for (size_t i = 0; i < in.dims.size(); ++i) {
    if (i > 0) s += "x";
    s += in.dims[i] >= 0 ? std::to_string(in.dims[i])
                         : (in.dim_names[i].empty() ? "?" : in.dim_names[i]);
  }
  return s.empty() ? "a scalar" : s;
}

std::string ShapeText(const ir::Shape& shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) s += (i > 0 ? "x" : "") + std::to_string(shape[i]);
  return s.empty() ? "a scalar" : s;
}

// Whether `shape` is one that `in` (or, for a sequence, its elements) takes.
Status CheckFits(const OnnxInput& in, const ir::Shape& shape, const std::string& label,
                 const std::string& path) {
  if (!in.ranked) return Status::Ok();
  bool fits = shape.size() == in.dims.size();
  for (size_t i = 0; fits && i < shape.size(); ++i) fits = in.dims[i] < 0 || in.dims[i] == shape[i];
  if (fits) return Status::Ok();
  return InvalidArgument(path + ": " + label + " is " + DimsText(in) + ", not " + ShapeText(shape));
}

// The shape `in` runs at: its own, or the one the options give.
StatusOr<ir::Shape> ShapeOf(const OnnxInput& in, const OnnxImportOptions& options,
                            const std::string& path) {
  auto given = options.input_shapes.find(in.name);
  bool dynamic = false;
  for (int64_t d : in.dims) dynamic |= d < 0;
  if (given == options.input_shapes.end()) {
    if (!dynamic) return ir::Shape(in.dims);
    return InvalidArgument(path + ": input '" + in.name + "' has the dynamic shape " +
                           DimsText(in) + ": give its shape with --arg-shape " + in.name +
                           "=DIMS (like 8x128) or an --input file");
  }
  TPUSIM_RETURN_IF_ERROR(CheckFits(in, given->second, "input '" + in.name + "'", path));
  return given->second;
}

// One parameter of @main: graph input `input` or one of its elements.
struct Param {
  size_t input = 0;
  ir::Type type;
  std::string name;
};

// @main's parameters for the graph's inputs: a tensor is one, a sequence
// one per element, an absent optional none.
StatusOr<std::vector<Param>> Params(const std::vector<OnnxInput>& inputs,
                                    const OnnxImportOptions& options, const std::string& path) {
  std::vector<Param> out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const OnnxInput& in = inputs[i];
    if (in.optional && options.absent_inputs.count(in.name) > 0) continue;
    if (!in.sequence) {
      TPUSIM_ASSIGN_OR_RETURN(ir::Shape shape, ShapeOf(in, options, path));
      out.push_back(Param{i, ir::Type::Tensor(in.element, shape), OnnxValueName(in.name)});
      continue;
    }
    auto shapes = options.sequence_shapes.find(in.name);
    if (shapes == options.sequence_shapes.end()) {
      return InvalidArgument(path + ": input '" + in.name +
                             "' is a sequence: give its elements (tpusim run --input " + in.name +
                             "=a.npy,b.npy or a folder of .npy files)");
    }
    for (size_t k = 0; k < shapes->second.size(); ++k) {
      const ir::Shape& shape = shapes->second[k];
      TPUSIM_RETURN_IF_ERROR(CheckFits(
          in, shape, "element " + std::to_string(k) + " of input '" + in.name + "'", path));
      out.push_back(Param{i, ir::Type::Tensor(in.element, shape),
                          OnnxElementName(in.name, static_cast<int64_t>(k))});
    }
  }
  return out;
}

// Binds each graph input to its parameters (`args`, one per Params entry).
void BindInputs(Graph& graph, const std::vector<OnnxInput>& inputs,
                const std::vector<Param>& params, const std::vector<ir::Value>& args,
                const OnnxImportOptions& options) {
  std::vector<Lowered> bound(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    bound[i].is_none = inputs[i].optional && options.absent_inputs.count(inputs[i].name) > 0;
    if (inputs[i].sequence && !bound[i].is_none) bound[i].sequence.emplace();
  }
  for (size_t p = 0; p < params.size(); ++p) {
    Lowered& l = bound[params[p].input];
    if (l.sequence) {
      l.sequence->push_back(Lowered{args[p], std::nullopt, ""});
      continue;
    }
    const std::string& name = inputs[params[p].input].name;
    l = Lowered{args[p], std::nullopt, name};
    // Small inputs (sizes, indices, counts) are read now, so that shapes
    // computed from them fold; the program still computes with the input.
    const ir::Type& type = params[p].type;
    if (options.input_value && type.num_elements() <= onnx_import::kMaxFoldedElements) {
      StatusOr<Tensor> value = options.input_value(name);
      if (value.ok() && value->type() == type) l.known = *std::move(value);
    }
  }
  for (size_t i = 0; i < inputs.size(); ++i) graph.Bind(inputs[i].name, std::move(bound[i]));
}

// @main's results for the graph's outputs, and which is which.
std::vector<ir::Value> Results(const std::vector<Lowered>& outputs,
                               std::vector<OnnxResult>* which) {
  std::vector<ir::Value> out;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Lowered& o = outputs[i];
    if (o.sequence) {
      for (size_t k = 0; k < o.sequence->size(); ++k) {
        out.push_back((*o.sequence)[k].value);
        if (which) which->push_back(OnnxResult{static_cast<int>(i), static_cast<int64_t>(k)});
      }
    } else if (!o.is_none) {
      out.push_back(o.value);
      if (which) which->push_back(OnnxResult{static_cast<int>(i), -1});
    }
  }
  return out;
}

}  // namespace

std::string OnnxValueName(const std::string& name) {
  std::string out;
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "_" + out;
  return out;
}

std::string OnnxElementName(const std::string& name, int64_t k) {
  return OnnxValueName(name) + "_" + std::to_string(k);
}

bool LooksLikeOnnx(std::string_view bytes) {
  // A ModelProto's first field is ir_version (field 1, a varint: 0x08).
  return !bytes.empty() && bytes[0] == 0x08 && bytes.find('\0') != std::string_view::npos;
}

StatusOr<std::vector<OnnxInput>> ReadOnnxInputs(std::string_view bytes, const std::string& path) {
  TPUSIM_ASSIGN_OR_RETURN(onnx::ModelProto model, Parse(bytes, path));
  return Inputs(model, path);
}

StatusOr<std::unique_ptr<ir::Module>> ImportOnnx(std::string_view bytes, const std::string& path,
                                                 const OnnxImportOptions& options,
                                                 std::vector<OnnxResult>* results) {
  TPUSIM_ASSIGN_OR_RETURN(onnx::ModelProto model, Parse(bytes, path));
  const std::string dir = std::filesystem::path(path).parent_path().string();
  TPUSIM_RETURN_IF_ERROR(onnx_import::LoadExternalData(model, dir).WithContext(path));
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    return InvalidArgument(path + ": invalid ONNX model: " + OneLine(e.what()));
  }
  ModelContext ctx;
  ctx.path = path;
  ctx.file = std::make_shared<const std::string>(path);
  TPUSIM_ASSIGN_OR_RETURN(ctx.opset, AiOnnxOpset(model, path));
  ctx.options = &options;

  TPUSIM_ASSIGN_OR_RETURN(std::vector<OnnxInput> inputs, Inputs(model, path));
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Param> params, Params(inputs, options, path));
  ir::FunctionType type;
  for (const Param& p : params) type.inputs.push_back(p.type);
  auto module = std::make_unique<ir::Module>();
  module->set_name(OnnxValueName(model.graph().name().empty() ? "onnx" : model.graph().name()));
  auto f = std::make_unique<ir::Function>("main", type, ir::Location{ctx.file, 0, 0});
  f->set_public(true);
  ir::Block& entry = f->body().AddBlock();
  Graph graph(ctx, &entry, nullptr);
  std::vector<ir::Value> args;
  for (const Param& p : params) args.push_back(entry.AddArgument(p.type, p.name));
  BindInputs(graph, inputs, params, args, options);
  TPUSIM_RETURN_IF_ERROR(graph.LowerNodes(model.graph()));
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Lowered> outputs, graph.Outputs(model.graph()));
  if (results != nullptr) results->clear();
  std::vector<ir::Value> values = Results(outputs, results);
  graph.b().set_location(ir::Location{ctx.file, 0, 0});
  graph.b().Emit("func.return", values, {});
  for (ir::Value r : values) type.results.push_back(r.type());
  f->set_type(type);
  f->result_attrs().resize(type.results.size());
  f->Renumber();
  module->AddFunction(std::move(f));
  return module;
}

}  // namespace tpusim::frontend

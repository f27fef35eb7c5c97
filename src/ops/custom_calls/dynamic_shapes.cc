// StableHLO's dynamic custom calls: the forms jax.export gives reduce_window,
// top_k, approx_top_k and rng_bit_generator when a window, k or an output
// shape is symbolic (jax/_src/export/_export.py lists them as stable):
//
//   @stablehlo.dynamic_reduce_window(inputs..., inits..., window_dimensions,
//       window_strides, base_dilations, window_dilations, padding)
//       {called_computations = [@reducer]}
//   @stablehlo.dynamic_top_k(operand, k)                 top k of the last dimension
//   @stablehlo.dynamic_approx_top_k(operand, iota, init, init_index, k, shapes...)
//       {called_computations = [@comparator], mhlo.backend_config = {...}}
//   @stablehlo.dynamic_rng_bit_generator(state, output_shape) {rng_algorithm = ...}
//
// The window, k and shape operands are 1-D (padding [rank, 2]) or 0-d
// integer tensors. Each call lives only until those values are known: the
// refine-shapes pass computes them from the input shapes and puts the static
// op in its place (stablehlo.reduce_window with the reducer's body as its
// region, chlo.top_k, ApproxTopK with top_k set, stablehlo.rng_bit_generator),
// as StableHLO's canonicalize-dynamism does. Run or priced before that, each
// does the same from the values at hand.
#include <cstring>
#include <optional>

#include "ops/reduce_window.h"
#include "ops/util/index_util.h"
#include "ops/util/op_util.h"
#include "ops/util/work_util.h"
#include "tpusim/ir/dynamic.h"
#include "tpusim/ir/rewrite.h"
#include "tpusim/ops/custom_call.h"

namespace tpusim::ops {
namespace {

using Values = std::span<const Tensor* const>;
using StaticOp = StatusOr<std::unique_ptr<ir::Operation>>;

// ------------------------------------------------------------ shared

// The integers operand `i` holds, when its value is known.
std::optional<std::vector<int64_t>> KnownInts(Values values, int i) {
  if (i < 0 || static_cast<size_t>(i) >= values.size() || values[i] == nullptr) {
    return std::nullopt;
  }
  if (!ir::IsInteger(values[i]->element())) return std::nullopt;
  return IndexValues(*values[i]);
}

// Operand `i` must be an integer tensor of `shape`.
Status ExpectIntOperand(const ir::Operation& op, int i, const ir::Shape& shape,
                        std::string_view what) {
  const ir::Type& t = op.operand(i).type();
  if (t.is_tensor() && ir::IsInteger(t.element()) && t.shape() == shape) return Status::Ok();
  return InvalidArgument(std::string(what) + " (operand " + std::to_string(i) +
                         ") must be an integer tensor of shape " + FormatInts(shape) + ", got " +
                         t.ToString());
}

// The declared result types when they are all static; else an error saying
// that `what` is not known before the program runs.
StatusOr<std::vector<ir::Type>> DeclaredTypes(const ir::Operation& op, std::string_view what) {
  std::vector<ir::Type> types = ir::TypesOf(op.results());
  for (const ir::Type& t : types) {
    if (!ir::IsStatic(t)) {
      return InvalidArgument(std::string(what) +
                             " depends on values not known before the program runs");
    }
  }
  return types;
}

// A new op named `name` at `call`'s location with `operands` and the
// call's results.
std::unique_ptr<ir::Operation> NewOp(const ir::Operation& call, std::string_view name,
                                     std::vector<ir::Value> operands) {
  auto op = std::make_unique<ir::Operation>(ir::OpName(name), call.loc());
  op->SetOperands(std::move(operands));
  for (ir::Value r : call.results()) op->AddResult(r.type(), r.name());
  return op;
}

// Runs `call` as its static form, built from the operand values at hand.
StatusOr<std::vector<Tensor>> EvalAsStaticForm(EvalContext& ctx, const ir::Operation& call,
                                               std::span<const Tensor> in) {
  std::vector<const Tensor*> values;
  for (const Tensor& t : in) values.push_back(&t);
  TPUSIM_ASSIGN_OR_RETURN(std::unique_ptr<ir::Operation> stat,
                          StaticFormOfCall(call, values, ctx.module()));
  if (stat == nullptr) return Internal("no static form for the values given");
  std::vector<Tensor> operands;
  for (ir::Value v : stat->operands()) {
    for (int i = 0; i < call.num_operands(); ++i) {
      if (call.operand(i).impl() == v.impl()) {
        operands.push_back(in[i]);
        break;
      }
    }
  }
  const OpDef* def = OpRegistry::Lookup(stat->name());
  TPUSIM_RETURN_IF_ERROR(def->verify ? def->verify(*stat) : Status::Ok());
  return def->eval(ctx, *stat, operands);
}

// The values of operands defined by constants, as pricing sees them.
struct ConstantOperands {
  explicit ConstantOperands(const ir::Operation& op) {
    for (ir::Value v : op.operands()) {
      const ir::Operation* def = v.defining_op();
      StatusOr<Tensor> t = def != nullptr && def->name_str() == "stablehlo.constant"
                               ? Tensor::FromAttribute(def->attr("value"))
                               : StatusOr<Tensor>(NotFound(""));
      tensors.push_back(t.ok() ? std::optional<Tensor>(std::move(*t)) : std::nullopt);
    }
    for (const auto& t : tensors) values.push_back(t ? &*t : nullptr);
  }
  std::vector<std::optional<Tensor>> tensors;
  std::vector<const Tensor*> values;
};

// The work of the static form when the values it needs are constants; the
// traffic of the call otherwise.
Work WorkAsStaticForm(const ir::Operation& call) {
  ConstantOperands known(call);
  const ir::Module none;
  StaticOp stat = StaticFormOfCall(call, known.values, none);
  if (!stat.ok() || *stat == nullptr) return ReadsAndWrites(call);
  const OpDef* def = OpRegistry::Lookup((*stat)->name());
  return def != nullptr && def->work ? def->work(**stat) : ReadsAndWrites(call);
}

// ------------------------------------------------------------ reduce_window

constexpr int kWindowOperands = 5;

int NumReduced(const ir::Operation& op) { return (op.num_operands() - kWindowOperands) / 2; }

std::string Reducer(const ir::Operation& op) {
  ir::Attribute cc = op.attr("called_computations");
  if (cc.kind() != ir::Attribute::Kind::kArray || cc.array().size() != 1) return "";
  return cc.array()[0].str();
}

Status VerifyDynamicReduceWindow(const ir::Operation& op) {
  const int n = op.num_results();
  if (n < 1 || op.num_operands() != 2 * n + kWindowOperands) {
    return InvalidArgument("takes N inputs, N inits and 5 window operands for N results; got " +
                           std::to_string(op.num_operands()) + " operands for " +
                           std::to_string(n) + " results");
  }
  if (Reducer(op).empty()) return InvalidArgument("needs called_computations = [@reducer]");
  const ir::Type& input = op.operand(0).type();
  for (int i = 0; i < n; ++i) {
    const ir::Type& in = op.operand(i).type();
    const ir::Type& init = op.operand(n + i).type();
    if (!in.is_tensor() || in.rank() != input.rank() || !init.is_tensor() || init.rank() != 0 ||
        init.element() != in.element() || op.result(i).type().element() != in.element()) {
      return InvalidArgument("input " + std::to_string(i) + " (" + in.ToString() + "), init (" +
                             init.ToString() + ") and result (" + op.result(i).type().ToString() +
                             ") need one element type and a 0-d init");
    }
  }
  const char* names[] = {"window_dimensions", "window_strides", "base_dilations",
                         "window_dilations"};
  for (int w = 0; w < 4; ++w) {
    TPUSIM_RETURN_IF_ERROR(ExpectIntOperand(op, 2 * n + w, {input.rank()}, names[w]));
  }
  return ExpectIntOperand(op, 2 * n + 4, {input.rank(), 2}, "padding");
}

// The window the window operands hold, when known.
StatusOr<std::optional<Window>> KnownWindow(const ir::Operation& op, Values values) {
  const int first = 2 * NumReduced(op);
  std::vector<std::vector<int64_t>> params;
  for (int w = 0; w < kWindowOperands; ++w) {
    std::optional<std::vector<int64_t>> v = KnownInts(values, first + w);
    if (!v) return std::optional<Window>();
    params.push_back(std::move(*v));
  }
  TPUSIM_ASSIGN_OR_RETURN(Window window, MakeWindow(op.operand(0).type().shape(), params[0],
                                                    params[1], params[2], params[3], params[4]));
  return std::optional<Window>(std::move(window));
}

StatusOr<std::vector<ir::Type>> InferDynamicReduceWindow(const ir::Operation& op, Values values) {
  TPUSIM_RETURN_IF_ERROR(VerifyDynamicReduceWindow(op));
  TPUSIM_ASSIGN_OR_RETURN(std::optional<Window> w, KnownWindow(op, values));
  if (!w) return DeclaredTypes(op, "the window");
  std::vector<ir::Type> types;
  for (ir::Value r : op.results()) {
    types.push_back(ir::Type::Tensor(r.type().element(), w->OutputShape()));
  }
  return types;
}

// The reducer's body as a reduce_window region: its func.return becomes
// stablehlo.return.
Status CloneReducer(const ir::Function& f, ir::Region& region) {
  if (f.body().num_blocks() != 1) {
    return InvalidArgument("the reducer @" + f.name() + " must have one block");
  }
  ir::Block& block = region.AddBlock();
  ir::ValueMap map;
  for (ir::Value a : f.entry().arguments()) map[a.impl()] = block.AddArgument(a.type(), a.name());
  for (const auto& op : f.entry().ops()) {
    std::unique_ptr<ir::Operation> copy = ir::CloneOp(*op, map);
    if (copy->name_str() == "func.return") {
      auto ret = std::make_unique<ir::Operation>(ir::OpName("stablehlo.return"), copy->loc());
      ret->SetOperands(std::vector<ir::Value>(copy->operands().begin(), copy->operands().end()));
      copy = std::move(ret);
    }
    block.Append(std::move(copy));
  }
  return Status::Ok();
}

ir::Attribute Ints(const std::vector<int64_t>& v) {
  return ir::Attribute::DenseArray(ir::ElementType::kSI64, v);
}

StaticOp DynamicReduceWindowStatic(const ir::Operation& op, Values values,
                                   const ir::Module& module) {
  TPUSIM_ASSIGN_OR_RETURN(std::optional<Window> w, KnownWindow(op, values));
  const ir::Function* reducer = module.Lookup(Reducer(op));
  if (!w || reducer == nullptr) return std::unique_ptr<ir::Operation>();
  const int n = NumReduced(op);
  std::vector<ir::Value> operands(op.operands().begin(), op.operands().begin() + 2 * n);
  std::unique_ptr<ir::Operation> stat = NewOp(op, "stablehlo.reduce_window", std::move(operands));
  std::vector<int64_t> padding;
  for (int64_t d = 0; d < w->rank(); ++d) {
    padding.push_back(w->pad_low[d]);
    padding.push_back(w->pad_high[d]);
  }
  std::vector<uint8_t> bytes(padding.size() * sizeof(int64_t));
  std::memcpy(bytes.data(), padding.data(), bytes.size());
  stat->attrs().Set("window_dimensions", Ints(w->dims));
  stat->attrs().Set("window_strides", Ints(w->strides));
  stat->attrs().Set("base_dilations", Ints(w->base_dilations));
  stat->attrs().Set("window_dilations", Ints(w->window_dilations));
  stat->attrs().Set(
      "padding", ir::Attribute::DenseElements(
                     ir::Type::Tensor(ir::ElementType::kSI64, {w->rank(), 2}), std::move(bytes)));
  TPUSIM_RETURN_IF_ERROR(CloneReducer(*reducer, stat->AddRegion()));
  return stat;
}

// Folds each window with calls of the reducer function.
StatusOr<std::vector<Tensor>> EvalDynamicReduceWindow(EvalContext& ctx, const ir::Operation& op,
                                                      std::span<const Tensor> in) {
  std::vector<const Tensor*> values;
  for (const Tensor& t : in) values.push_back(&t);
  TPUSIM_ASSIGN_OR_RETURN(std::optional<Window> w, KnownWindow(op, values));
  const std::string reducer = Reducer(op);
  std::vector<Tensor> results;
  for (ir::Value r : op.results()) {
    TPUSIM_ASSIGN_OR_RETURN(
        Tensor t, Tensor::Allocate(ir::Type::Tensor(r.type().element(), w->OutputShape())));
    results.push_back(std::move(t));
  }
  return ReduceWindows(*w, in.first(2 * NumReduced(op)), std::move(results),
                       [&](std::span<const Tensor> args) { return ctx.Call(reducer, args); });
}

// One reducer evaluation per window element of each output, when the
// window is constant.
Work DynamicReduceWindowWork(const ir::Operation& op) {
  Work w = ReadsAndWrites(op);
  ConstantOperands known(op);
  StatusOr<std::optional<Window>> window = KnownWindow(op, known.values);
  if (!window.ok() || !*window) return w;
  int64_t size = 1;
  for (int64_t d : (*window)->dims) size *= d;
  int64_t outputs = 1;
  for (int64_t d : (*window)->OutputShape()) outputs *= d;
  w.AddVector(VectorClass::kAlu, outputs * size * NumReduced(op));
  return w;
}

TPUSIM_REGISTER_CUSTOM_CALL({.target = "stablehlo.dynamic_reduce_window",
                             .verify = VerifyDynamicReduceWindow,
                             .eval = EvalDynamicReduceWindow,
                             .work = DynamicReduceWindowWork,
                             .infer = InferDynamicReduceWindow,
                             .static_form = DynamicReduceWindowStatic});

// ------------------------------------------------------------ top_k

Status VerifyDynamicTopK(const ir::Operation& op) {
  if (op.num_operands() != 2 || op.num_results() != 2) {
    return InvalidArgument("takes (operand, k) to (values, indices)");
  }
  const ir::Type& x = op.operand(0).type();
  if (!x.is_tensor() || x.rank() < 1) {
    return InvalidArgument("operand must be a tensor of rank >= 1, got " + x.ToString());
  }
  TPUSIM_RETURN_IF_ERROR(ExpectIntOperand(op, 1, {}, "k"));
  const ir::Type& values = op.result(0).type();
  const ir::Type& indices = op.result(1).type();
  if (!values.is_tensor() || values.element() != x.element() || values.rank() != x.rank() ||
      !indices.is_tensor() || !ir::IsInteger(indices.element()) || indices.rank() != x.rank()) {
    return InvalidArgument(
        "results must be the operand's element type and integer indices of its rank");
  }
  return Status::Ok();
}

// The k operand holds, checked against the last dimension of size `n`.
StatusOr<std::optional<int64_t>> KnownK(Values values, int i, int64_t n) {
  std::optional<std::vector<int64_t>> k = KnownInts(values, i);
  if (!k || k->size() != 1) return std::optional<int64_t>();
  if ((*k)[0] < 0 || (*k)[0] > n) {
    return InvalidArgument("k = " + std::to_string((*k)[0]) +
                           " is out of range for a dimension of " + std::to_string(n));
  }
  return std::optional<int64_t>((*k)[0]);
}

StatusOr<std::vector<ir::Type>> InferDynamicTopK(const ir::Operation& op, Values values) {
  TPUSIM_RETURN_IF_ERROR(VerifyDynamicTopK(op));
  const ir::Type& x = op.operand(0).type();
  TPUSIM_ASSIGN_OR_RETURN(std::optional<int64_t> k, KnownK(values, 1, x.shape().back()));
  if (!k) return DeclaredTypes(op, "k");
  ir::Shape shape = x.shape();
  shape.back() = *k;
  return std::vector<ir::Type>{ir::Type::Tensor(x.element(), shape),
                               ir::Type::Tensor(op.result(1).type().element(), shape)};
}

StaticOp DynamicTopKStatic(const ir::Operation& op, Values values, const ir::Module&) {
  TPUSIM_ASSIGN_OR_RETURN(std::optional<int64_t> k,
                          KnownK(values, 1, op.operand(0).type().shape().back()));
  if (!k) return std::unique_ptr<ir::Operation>();
  std::unique_ptr<ir::Operation> stat = NewOp(op, "chlo.top_k", {op.operand(0)});
  stat->attrs().Set("k", ir::Attribute::Int(*k));
  return stat;
}

TPUSIM_REGISTER_CUSTOM_CALL({.target = "stablehlo.dynamic_top_k",
                             .verify = VerifyDynamicTopK,
                             .eval = EvalAsStaticForm,
                             .work = WorkAsStaticForm,
                             .infer = InferDynamicTopK,
                             .static_form = DynamicTopKStatic});

// ------------------------------------------------------------ approx_top_k

// Operands before the shape operands jax appends for dynamic results.
int ApproxOperands(const ir::Operation& op) {
  ir::Attribute shapes = op.attr("indices_of_shape_operands");
  return op.num_operands() - static_cast<int>(shapes ? shapes.AsInts().size() : 0);
}

ir::Attribute ApproxConfig(const ir::Operation& op) { return op.attr("mhlo.backend_config"); }

Status VerifyDynamicApproxTopK(const ir::Operation& op) {
  const int m = ApproxOperands(op);
  if (m < 3 || m % 2 == 0 || op.num_results() != (m - 1) / 2) {
    return InvalidArgument("takes N inputs, N inits and k for N results; got " + std::to_string(m) +
                           " operands for " + std::to_string(op.num_results()) + " results");
  }
  TPUSIM_RETURN_IF_ERROR(ExpectIntOperand(op, m - 1, {}, "k"));
  ir::Attribute config = ApproxConfig(op);
  if (config.kind() != ir::Attribute::Kind::kDict ||
      config.Get("reduction_dim").kind() != ir::Attribute::Kind::kInt) {
    return InvalidArgument("needs mhlo.backend_config = {reduction_dim = ..., ...}");
  }
  if (config.Get("top_k")) {
    return InvalidArgument("takes k as an operand; top_k in its backend_config is for ApproxTopK");
  }
  const int64_t dim = config.Get("reduction_dim").int_value();
  const ir::Type& x = op.operand(0).type();
  if (!x.is_tensor() || dim < 0 || dim >= x.rank()) {
    return InvalidArgument("reduction_dim " + std::to_string(dim) + " is out of range for " +
                           x.ToString());
  }
  ir::Attribute aggregate = config.Get("aggregate_to_topk");
  if (aggregate && aggregate.kind() == ir::Attribute::Kind::kBool && !aggregate.bool_value()) {
    return Unimplemented("aggregate_to_topk = false with a dynamic k (jax does not export it)");
  }
  return Status::Ok();
}

StatusOr<std::vector<ir::Type>> InferDynamicApproxTopK(const ir::Operation& op, Values values) {
  TPUSIM_RETURN_IF_ERROR(VerifyDynamicApproxTopK(op));
  const ir::Type& x = op.operand(0).type();
  const int64_t dim = ApproxConfig(op).Get("reduction_dim").int_value();
  TPUSIM_ASSIGN_OR_RETURN(std::optional<int64_t> k,
                          KnownK(values, ApproxOperands(op) - 1, x.dim(dim)));
  if (!k) return DeclaredTypes(op, "k");
  ir::Shape shape = x.shape();
  shape[dim] = *k;
  std::vector<ir::Type> types;
  for (ir::Value r : op.results()) types.push_back(ir::Type::Tensor(r.type().element(), shape));
  return types;
}

// ApproxTopK with top_k = k, without the k and shape operands.
StaticOp DynamicApproxTopKStatic(const ir::Operation& op, Values values, const ir::Module&) {
  TPUSIM_RETURN_IF_ERROR(VerifyDynamicApproxTopK(op));
  const int m = ApproxOperands(op);
  const int64_t dim = ApproxConfig(op).Get("reduction_dim").int_value();
  TPUSIM_ASSIGN_OR_RETURN(std::optional<int64_t> k,
                          KnownK(values, m - 1, op.operand(0).type().dim(dim)));
  if (!k) return std::unique_ptr<ir::Operation>();
  std::vector<ir::Value> operands(op.operands().begin(), op.operands().begin() + (m - 1));
  std::unique_ptr<ir::Operation> stat = NewOp(op, "stablehlo.custom_call", std::move(operands));
  for (const auto& [key, value] : op.attrs().entries()) {
    if (key == "indices_of_shape_operands" || key == "operand_layouts") continue;
    stat->attrs().Set(key, value);
  }
  std::vector<ir::NamedAttribute> config = ApproxConfig(op).fields();
  config.push_back({"top_k", ir::Attribute::Int(*k)});
  stat->attrs().Set("mhlo.backend_config", ir::Attribute::Dict(std::move(config)));
  stat->attrs().Set("call_target_name", ir::Attribute::String("ApproxTopK"));
  return stat;
}

TPUSIM_REGISTER_CUSTOM_CALL({.target = "stablehlo.dynamic_approx_top_k",
                             .verify = VerifyDynamicApproxTopK,
                             .eval = EvalAsStaticForm,
                             .work = WorkAsStaticForm,
                             .infer = InferDynamicApproxTopK,
                             .static_form = DynamicApproxTopKStatic});

// ------------------------------------------------------------ rng_bit_generator

Status VerifyDynamicRng(const ir::Operation& op) {
  if (op.num_operands() != 2 || op.num_results() != 2) {
    return InvalidArgument("takes (initial_state, output_shape) to (output_state, output)");
  }
  const ir::Type& out = op.result(1).type();
  if (!out.is_tensor()) return InvalidArgument("output must be a tensor, got " + out.ToString());
  if (op.result(0).type() != op.operand(0).type()) {
    return InvalidArgument("output_state must have the initial state's type " +
                           op.operand(0).type().ToString());
  }
  return ExpectIntOperand(op, 1, {out.rank()}, "output_shape");
}

StatusOr<std::optional<ir::Shape>> KnownOutputShape(Values values) {
  std::optional<std::vector<int64_t>> shape = KnownInts(values, 1);
  if (!shape) return std::optional<ir::Shape>();
  for (int64_t d : *shape) {
    if (d < 0)
      return InvalidArgument("output_shape " + FormatInts(*shape) + " has a negative size");
  }
  return std::optional<ir::Shape>(ir::Shape(shape->begin(), shape->end()));
}

StatusOr<std::vector<ir::Type>> InferDynamicRng(const ir::Operation& op, Values values) {
  TPUSIM_RETURN_IF_ERROR(VerifyDynamicRng(op));
  TPUSIM_ASSIGN_OR_RETURN(std::optional<ir::Shape> shape, KnownOutputShape(values));
  if (!shape) return DeclaredTypes(op, "output_shape");
  return std::vector<ir::Type>{op.operand(0).type(),
                               ir::Type::Tensor(op.result(1).type().element(), *shape)};
}

StaticOp DynamicRngStatic(const ir::Operation& op, Values values, const ir::Module&) {
  TPUSIM_ASSIGN_OR_RETURN(std::optional<ir::Shape> shape, KnownOutputShape(values));
  if (!shape) return std::unique_ptr<ir::Operation>();
  std::unique_ptr<ir::Operation> stat = NewOp(op, "stablehlo.rng_bit_generator", {op.operand(0)});
  if (ir::Attribute a = op.attr("rng_algorithm")) stat->attrs().Set("rng_algorithm", a);
  return stat;
}

TPUSIM_REGISTER_CUSTOM_CALL({.target = "stablehlo.dynamic_rng_bit_generator",
                             .verify = VerifyDynamicRng,
                             .eval = EvalAsStaticForm,
                             .work = WorkAsStaticForm,
                             .infer = InferDynamicRng,
                             .static_form = DynamicRngStatic});

}  // namespace
}  // namespace tpusim::ops

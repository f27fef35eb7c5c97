#include "compiler/layout_rules.h"

#include <algorithm>
#include <string>
#include <unordered_set>

#include "tpusim/ir/rewrite.h"

namespace tpusim::compiler {
namespace {

// Ops that compute each result element from the operand elements at the
// same index, so any one layout shared by all serves them.
bool IsPointwiseName(const std::string& name) {
  static const std::unordered_set<std::string> kNames = {
      // stablehlo
      "stablehlo.abs", "stablehlo.add", "stablehlo.and", "stablehlo.atan2",
      "stablehlo.bitcast_convert", "stablehlo.cbrt", "stablehlo.ceil", "stablehlo.clamp",
      "stablehlo.compare", "stablehlo.complex", "stablehlo.convert", "stablehlo.cosine",
      "stablehlo.count_leading_zeros", "stablehlo.divide", "stablehlo.exponential",
      "stablehlo.exponential_minus_one", "stablehlo.floor", "stablehlo.imag", "stablehlo.is_finite",
      "stablehlo.log", "stablehlo.log_plus_one", "stablehlo.logistic", "stablehlo.map",
      "stablehlo.maximum", "stablehlo.minimum", "stablehlo.multiply", "stablehlo.negate",
      "stablehlo.not", "stablehlo.or", "stablehlo.popcnt", "stablehlo.power", "stablehlo.real",
      "stablehlo.reduce_precision", "stablehlo.remainder", "stablehlo.round_nearest_afz",
      "stablehlo.round_nearest_even", "stablehlo.rsqrt", "stablehlo.select", "stablehlo.shift_left",
      "stablehlo.shift_right_arithmetic", "stablehlo.shift_right_logical", "stablehlo.sign",
      "stablehlo.sine", "stablehlo.sqrt", "stablehlo.subtract", "stablehlo.tan", "stablehlo.tanh",
      "stablehlo.xor",
      // chlo (the broadcast_* forms only when no operand is broadcast; see
      // IsElementwise)
      "chlo.acos", "chlo.acosh", "chlo.asin", "chlo.asinh", "chlo.atan", "chlo.atanh",
      "chlo.bessel_i1e", "chlo.conj", "chlo.cosh", "chlo.digamma", "chlo.erf", "chlo.erf_inv",
      "chlo.erfc", "chlo.is_inf", "chlo.is_neg_inf", "chlo.is_pos_inf", "chlo.lgamma",
      "chlo.next_after", "chlo.polygamma", "chlo.sinh", "chlo.square", "chlo.tan", "chlo.zeta",
      "chlo.broadcast_add", "chlo.broadcast_and", "chlo.broadcast_atan2", "chlo.broadcast_compare",
      "chlo.broadcast_complex", "chlo.broadcast_divide", "chlo.broadcast_maximum",
      "chlo.broadcast_minimum", "chlo.broadcast_multiply", "chlo.broadcast_next_after",
      "chlo.broadcast_or", "chlo.broadcast_polygamma", "chlo.broadcast_power",
      "chlo.broadcast_remainder", "chlo.broadcast_select", "chlo.broadcast_shift_left",
      "chlo.broadcast_shift_right_arithmetic", "chlo.broadcast_shift_right_logical",
      "chlo.broadcast_subtract", "chlo.broadcast_xor", "chlo.broadcast_zeta"};
  return kNames.contains(name);
}

bool IsScalar(const ir::Type& t) { return t.is_tensor() && t.rank() == 0; }

// A pointwise op whose operands all have its result's shape (scalars aside,
// as clamp's bounds and select's predicate may be): a bitcast_convert that
// changes the width, or a chlo op that broadcasts, is not.
bool IsElementwise(const ir::Operation& op) {
  if (!IsPointwiseName(op.name_str()) || op.num_results() != 1) return false;
  const ir::Type& result = op.result(0).type();
  if (!result.is_tensor()) return false;
  for (ir::Value v : op.operands()) {
    const ir::Type& t = v.type();
    if (!t.is_tensor() || (!IsScalar(t) && t.shape() != result.shape())) return false;
  }
  return true;
}

// The dimensions of matmul operand `i` that the MXU reads as a matrix: a
// convolution's feature dimensions, a dot's non-batch ones (more than two
// are flattened to a matrix, which needs row-major).
std::vector<int64_t> MatrixDims(const ir::Operation& op, int i) {
  const int64_t rank = op.operand(i).type().rank();
  std::vector<int64_t> dims;
  if (op.name_str() == "stablehlo.convolution") {
    ir::Attribute dn = op.attr("dimension_numbers");
    auto get = [&](std::string_view key) {
      ir::Attribute f = dn ? dn.Get(key) : ir::Attribute();
      return f && f.kind() == ir::Attribute::Kind::kInt ? f.int_value() : 0;
    };
    if (i == 0) return {get("input_feature_dimension")};
    return {get("kernel_input_feature_dimension"), get("kernel_output_feature_dimension")};
  }
  std::vector<int64_t> batch;
  if (op.name_str() == "stablehlo.dot_general") {
    ir::Attribute dn = op.attr("dot_dimension_numbers");
    ir::Attribute f = dn ? dn.Get(i == 0 ? "lhs_batching_dimensions" : "rhs_batching_dimensions")
                         : ir::Attribute();
    if (f) batch = f.AsInts();
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(batch.begin(), batch.end(), d) == batch.end()) dims.push_back(d);
  }
  return dims;
}

LayoutNeed RowMajorNeed() { return {.kind = LayoutNeed::Kind::kExact}; }

bool IsRowMajor(const ir::Type& t) {
  if (t.is_tuple()) {
    for (const ir::Type& e : t.tuple_elements()) {
      if (!IsRowMajor(e)) return false;
    }
    return true;
  }
  return !t.is_tensor() || t.layout().empty();
}

// The minor-two dims of `t`'s layout contain every dim of `dims`.
bool MinorTwoHold(const ir::Type& t, const std::vector<int64_t>& dims) {
  const std::vector<int64_t> order = t.MinorToMajor();
  return std::all_of(dims.begin(), dims.end(),
                     [&](int64_t d) { return d == order[0] || d == order[1]; });
}

Status LayoutBug(const ir::Operation& op, const std::string& what) {
  return Internal("layout assignment left " + op.name_str() + " at " + op.loc().ToString() +
                  " with " + what);
}

Status VerifyOp(const ir::Operation& op, const ir::FunctionType& fn) {
  for (int i = 0; i < op.num_operands(); ++i) {
    if (!Satisfies(op.operand(i).type(), NeedOf(op, i, fn))) {
      return LayoutBug(
          op, "operand " + std::to_string(i) + " of type " + op.operand(i).type().ToString());
    }
  }
  const LayoutRule rule = RuleOf(op);
  for (int i = 0; i < op.num_results(); ++i) {
    const ir::Type& t = op.result(i).type();
    bool ok = true;
    if (rule == LayoutRule::kMatmul || rule == LayoutRule::kRowMajor) ok = IsRowMajor(t);
    if (rule == LayoutRule::kTupleElement) {
      const ir::Type& tuple = op.operand(0).type();
      int64_t index = op.attr("index") ? op.attr("index").int_value() : -1;
      ok = tuple.is_tuple() && index >= 0 &&
           index < static_cast<int64_t>(tuple.tuple_elements().size()) &&
           ir::SameLayout(tuple.tuple_elements()[index], t);
    }
    if (!ok) return LayoutBug(op, "result " + std::to_string(i) + " of type " + t.ToString());
  }
  for (int r = 0; r < op.num_regions(); ++r) {
    for (int b = 0; b < op.region(r).num_blocks(); ++b) {
      for (ir::Value arg : op.region(r).block(b).arguments()) {
        if (!IsRowMajor(arg.type())) {
          return LayoutBug(op, "a region argument of type " + arg.type().ToString());
        }
      }
    }
  }
  return Status::Ok();
}

Status VerifyFunction(const ir::Function& f, bool is_entry) {
  const ir::FunctionType& fn = f.type();
  for (int i = 0; i < f.entry().num_arguments(); ++i) {
    const ir::Type& t = f.entry().argument(i).type();
    if (i >= static_cast<int>(fn.inputs.size()) || !ir::SameLayout(t, fn.inputs[i]) ||
        (!is_entry && !IsRowMajor(t))) {
      return Internal("layout assignment left argument " + std::to_string(i) + " of @" + f.name() +
                      " as " + t.ToString() + ", not its signature's " + fn.ToString());
    }
  }
  if (!is_entry) {
    for (const ir::Type& t : fn.results) {
      if (!IsRowMajor(t)) {
        return Internal("layout assignment left @" + f.name() + " returning " + t.ToString());
      }
    }
  }
  Status status = Status::Ok();
  ir::Walk(f.body(), [&](ir::Operation& op) {
    if (status.ok()) status = VerifyOp(op, fn);
  });
  return status;
}

}  // namespace

LayoutRule RuleOf(const ir::Operation& op) {
  const std::string& name = op.name_str();
  if (IsElementwise(op)) return LayoutRule::kElementwise;
  if (name == "stablehlo.broadcast_in_dim" || name == "stablehlo.iota" ||
      name == "stablehlo.constant" || name == "stablehlo.reduce" || name == "tpusim.copy") {
    return LayoutRule::kProducer;
  }
  if (name == "stablehlo.transpose") return LayoutRule::kTranspose;
  if (name == "stablehlo.dot_general" || name == "stablehlo.dot" ||
      name == "stablehlo.convolution") {
    return LayoutRule::kMatmul;
  }
  if (name == "stablehlo.get_tuple_element") return LayoutRule::kTupleElement;
  return LayoutRule::kRowMajor;
}

LayoutNeed NeedOf(const ir::Operation& op, int i, const ir::FunctionType& fn) {
  const ir::Type& t = op.operand(i).type();
  if (!t.is_tensor() || t.rank() < 2) return {};
  if (op.name_str() == "func.return") {
    if (i >= static_cast<int>(fn.results.size())) return {};
    return {.kind = LayoutNeed::Kind::kExact, .layout = fn.results[i].layout()};
  }
  switch (RuleOf(op)) {
    case LayoutRule::kElementwise:
      return {.kind = LayoutNeed::Kind::kExact, .layout = op.result(0).type().layout()};
    case LayoutRule::kProducer:
    case LayoutRule::kTranspose:
    case LayoutRule::kTupleElement:
      return {};
    case LayoutRule::kMatmul: {
      std::vector<int64_t> dims = MatrixDims(op, i);
      if (dims.size() > 2) return RowMajorNeed();
      return {.kind = LayoutNeed::Kind::kMinor, .dims = std::move(dims)};
    }
    case LayoutRule::kRowMajor:
      return RowMajorNeed();
  }
  return RowMajorNeed();
}

bool Satisfies(const ir::Type& t, const LayoutNeed& need) {
  if (!t.is_tensor() || t.rank() < 2) return true;
  switch (need.kind) {
    case LayoutNeed::Kind::kAny:
      return true;
    case LayoutNeed::Kind::kExact:
      return t.layout() == need.layout;
    case LayoutNeed::Kind::kMinor:
      return MinorTwoHold(t, need.dims);
  }
  return false;
}

std::vector<int64_t> LayoutFor(const ir::Type& t, const LayoutNeed& need) {
  if (need.kind == LayoutNeed::Kind::kExact) return need.layout;
  if (need.kind == LayoutNeed::Kind::kAny || MinorTwoHold(t.WithDefaultLayout(), need.dims)) {
    return {};
  }
  std::vector<int64_t> order(need.dims.rbegin(), need.dims.rend());
  for (int64_t d = t.rank() - 1; d >= 0; --d) {
    if (std::find(need.dims.begin(), need.dims.end(), d) == need.dims.end()) order.push_back(d);
  }
  return t.WithLayout(std::move(order)).layout();
}

ir::Type RowMajor(const ir::Type& t) {
  if (t.is_tuple()) {
    std::vector<ir::Type> elements;
    for (const ir::Type& e : t.tuple_elements()) elements.push_back(RowMajor(e));
    return ir::Type::Tuple(std::move(elements));
  }
  return t.is_tensor() ? t.WithDefaultLayout() : t;
}

Status VerifyLayouts(const ir::Module& module, std::string_view entry) {
  for (const auto& f : module.functions()) {
    TPUSIM_RETURN_IF_ERROR(VerifyFunction(*f, f->name() == entry));
  }
  return Status::Ok();
}

}  // namespace tpusim::compiler

// The table of pretty op forms. Each entry says how the trailing types read
// (Sig) and how the pretty items become the generic form's attributes (Rule),
// so `stablehlo.transpose %x, dims = [1, 0]` and
// `"stablehlo.transpose"(%x) <{permutation = array<i64: 1, 0>}>` build the
// same operation.
#include <charconv>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "frontend/stablehlo/parser.h"

namespace tpusim::frontend {
namespace {

using ir::Attribute;

// How a signature that is not in functional form reads.
enum class Sig : uint8_t {
  kSame,         // `: T`: every operand and the one result are T
  kResults,      // `: T, ...`: result types (the operands' types are their own)
  kOperands,     // `: T, ...`: operand types (one type may stand for all); no results
  kPassThrough,  // `: T, ...`: operand types, and results of the same types
  kSelect,       // `: P, T`: predicate P, other operands and the result T
  kComplex,      // `: complex T`: operands are T's real parts, the result T
};

using Rule = Status (*)(Parser&, PrettyOp&);

struct Form {
  Sig sig;
  Rule rule;
};

// Removes and returns keyword `key`; null if absent.
Attribute Take(PrettyOp& p, std::string_view key) {
  for (auto it = p.keywords.begin(); it != p.keywords.end(); ++it) {
    if (it->first == key) {
      Attribute a = it->second;
      p.keywords.erase(it);
      return a;
    }
  }
  return {};
}

void Set(PrettyOp& p, std::string key, Attribute value) {
  p.op->attrs().Set(std::move(key), std::move(value));
}

// A keyword holding an integer list, as `array<i64: ...>` under `generic`.
Status MoveInts(Parser& parser, PrettyOp& p, std::string_view key, std::string generic,
                bool required = true) {
  Attribute a = Take(p, key);
  if (!a) {
    if (!required) return Status::Ok();
    return parser.ErrorAt(p.name_offset, "missing '" + std::string(key) + " = [...]'");
  }
  if (a.kind() != Attribute::Kind::kArray || a.AsInts().size() != a.array().size()) {
    return parser.ErrorAt(p.name_offset, "'" + std::string(key) + "' must be a list of integers");
  }
  Set(p, std::move(generic), Attribute::DenseArray(ir::ElementType::kSI64, a.AsInts()));
  return Status::Ok();
}

Status MoveInt(Parser& parser, PrettyOp& p, std::string_view key, std::string generic,
               ir::ElementType type = ir::ElementType::kSI64, bool required = true) {
  Attribute a = Take(p, key);
  if (!a) {
    if (!required) return Status::Ok();
    return parser.ErrorAt(p.name_offset, "missing '" + std::string(key) + " = N'");
  }
  if (a.kind() != Attribute::Kind::kInt) {
    return parser.ErrorAt(p.name_offset, "'" + std::string(key) + "' must be an integer");
  }
  Set(p, std::move(generic), Attribute::Int(a.int_value(), type));
  return Status::Ok();
}

Status MoveEnum(Parser& parser, PrettyOp& p, std::string_view key, std::string generic,
                std::string dialect) {
  Attribute a = Take(p, key);
  if (!a) return Status::Ok();
  if (a.kind() != Attribute::Kind::kString) {
    return parser.ErrorAt(p.name_offset, "'" + std::string(key) + "' must be a name");
  }
  Set(p, std::move(generic), Attribute::Enum(std::move(dialect), a.str()));
  return Status::Ok();
}

Status NoAttrs(Parser&, PrettyOp&) { return Status::Ok(); }

Status Compare(Parser& parser, PrettyOp& p) {
  if (p.idents.empty() || p.idents.size() > 2) {
    return parser.ErrorAt(p.name_offset, "compare needs a direction (EQ, NE, ...) and an optional type");
  }
  Set(p, "comparison_direction", Attribute::Enum("stablehlo.comparison_direction", p.idents[0]));
  if (p.idents.size() == 2) {
    Set(p, "compare_type", Attribute::Enum("stablehlo.comparison_type", p.idents[1]));
  }
  p.idents.clear();
  return Status::Ok();
}

Status Constant(Parser& parser, PrettyOp& p) {
  if (p.literals.size() != 1 || p.literals[0].kind() != Attribute::Kind::kDenseElements) {
    return parser.ErrorAt(p.name_offset, "constant needs one dense<...> literal");
  }
  if (p.result_types.empty()) p.result_types = {p.literals[0].type()};
  Set(p, "value", p.literals[0]);
  p.literals.clear();
  return Status::Ok();
}

Status BroadcastInDim(Parser& parser, PrettyOp& p) {
  return MoveInts(parser, p, "dims", "broadcast_dimensions");
}
Status DynamicBroadcastInDim(Parser& parser, PrettyOp& p) {
  TPUSIM_RETURN_IF_ERROR(MoveInts(parser, p, "dims", "broadcast_dimensions"));
  TPUSIM_RETURN_IF_ERROR(MoveInts(parser, p, "known_expanding_dimensions",
                                  "known_expanding_dimensions", false));
  return MoveInts(parser, p, "known_nonexpanding_dimensions", "known_nonexpanding_dimensions",
                  false);
}
Status Transpose(Parser& parser, PrettyOp& p) { return MoveInts(parser, p, "dims", "permutation"); }
Status Reverse(Parser& parser, PrettyOp& p) { return MoveInts(parser, p, "dims", "dimensions"); }
// `dim = N` of concatenate and get_dimension_size.
Status Dimension(Parser& parser, PrettyOp& p) { return MoveInt(parser, p, "dim", "dimension"); }
Status Iota(Parser& parser, PrettyOp& p) { return MoveInt(parser, p, "dim", "iota_dimension"); }
Status DynamicSlice(Parser& parser, PrettyOp& p) {
  return MoveInts(parser, p, "sizes", "slice_sizes");
}

Status Pad(Parser& parser, PrettyOp& p) {
  TPUSIM_RETURN_IF_ERROR(MoveInts(parser, p, "low", "edge_padding_low"));
  TPUSIM_RETURN_IF_ERROR(MoveInts(parser, p, "high", "edge_padding_high"));
  return MoveInts(parser, p, "interior", "interior_padding");
}

Status Slice(Parser& parser, PrettyOp& p) {
  if (!p.has_index_group) return parser.ErrorAt(p.name_offset, "slice needs [start:limit:stride, ...]");
  std::vector<int64_t> start, limit, strides;
  for (const auto& entry : p.index_group) {
    if (entry.size() < 2) return parser.ErrorAt(p.name_offset, "slice ranges are start:limit[:stride]");
    start.push_back(entry[0]);
    limit.push_back(entry[1]);
    strides.push_back(entry.size() == 3 ? entry[2] : 1);
  }
  p.has_index_group = false;
  Set(p, "start_indices", Attribute::DenseArray(ir::ElementType::kSI64, start));
  Set(p, "limit_indices", Attribute::DenseArray(ir::ElementType::kSI64, limit));
  Set(p, "strides", Attribute::DenseArray(ir::ElementType::kSI64, strides));
  return Status::Ok();
}

Status GetTupleElement(Parser& parser, PrettyOp& p) {
  if (!p.has_index_group || p.index_group.size() != 1 || p.index_group[0].size() != 1) {
    return parser.ErrorAt(p.name_offset, "get_tuple_element needs one index: %t[i]");
  }
  p.has_index_group = false;
  Set(p, "index", Attribute::Int(p.index_group[0][0], ir::ElementType::kSI32));
  return Status::Ok();
}

// `format = e5m10`.
Status ReducePrecision(Parser& parser, PrettyOp& p) {
  Attribute f = Take(p, "format");
  int64_t e = 0, m = 0;
  if (f.kind() == Attribute::Kind::kString && f.str().size() >= 4 && f.str()[0] == 'e') {
    const std::string& s = f.str();
    size_t mpos = s.find('m');
    if (mpos != std::string::npos) {
      auto r1 = std::from_chars(s.data() + 1, s.data() + mpos, e);
      auto r2 = std::from_chars(s.data() + mpos + 1, s.data() + s.size(), m);
      if (r1.ec == std::errc() && r1.ptr == s.data() + mpos && r2.ec == std::errc() &&
          r2.ptr == s.data() + s.size()) {
        Set(p, "exponent_bits", Attribute::Int(e, ir::ElementType::kSI32));
        Set(p, "mantissa_bits", Attribute::Int(m, ir::ElementType::kSI32));
        return Status::Ok();
      }
    }
  }
  return parser.ErrorAt(p.name_offset, "reduce_precision needs format = e<E>m<M>");
}

Status Fft(Parser& parser, PrettyOp& p) {
  TPUSIM_RETURN_IF_ERROR(MoveEnum(parser, p, "type", "fft_type", "stablehlo.fft_type"));
  return MoveInts(parser, p, "length", "fft_length");
}

Status Precision(Parser& parser, PrettyOp& p) {
  Attribute a = Take(p, "precision");
  if (!a) return Status::Ok();
  std::vector<Attribute> values;
  for (const Attribute& v : a.kind() == Attribute::Kind::kArray ? a.array() : std::vector<Attribute>{}) {
    if (v.kind() != Attribute::Kind::kString) {
      return parser.ErrorAt(p.name_offset, "precision must be a list of DEFAULT/HIGH/HIGHEST");
    }
    values.push_back(Attribute::Enum("stablehlo.precision", v.str()));
  }
  Set(p, "precision_config", Attribute::Array(std::move(values)));
  return Status::Ok();
}

// `batching_dims = [0] x [0], contracting_dims = [2] x [1]`.
Status DotGeneral(Parser& parser, PrettyOp& p) {
  std::vector<ir::NamedAttribute> fields;
  for (auto [key, lhs, rhs] : {std::tuple{"batching_dims", "lhs_batching_dimensions",
                                          "rhs_batching_dimensions"},
                               std::tuple{"contracting_dims", "lhs_contracting_dimensions",
                                          "rhs_contracting_dimensions"}}) {
    Attribute a = Take(p, key);
    if (!a) continue;
    if (a.kind() != Attribute::Kind::kArray || a.array().size() != 2) {
      return parser.ErrorAt(p.name_offset, std::string(key) + " must be [..] x [..]");
    }
    // Empty lists are left out, as the generic printer does.
    if (!a.array()[0].array().empty()) fields.emplace_back(lhs, a.array()[0]);
    if (!a.array()[1].array().empty()) fields.emplace_back(rhs, a.array()[1]);
  }
  Set(p, "dot_dimension_numbers", Attribute::Struct("stablehlo.dot", std::move(fields)));
  TPUSIM_RETURN_IF_ERROR(Precision(parser, p));
  if (Attribute alg = Take(p, "algorithm")) Set(p, "algorithm", alg);
  return Status::Ok();
}

// `dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {...}`.
Status Convolution(Parser& parser, PrettyOp& p) {
  Attribute dims = Take(p, "dim_numbers");
  if (!dims) return parser.ErrorAt(p.name_offset, "convolution needs dim_numbers = ...");
  Set(p, "dimension_numbers", dims);
  Attribute window = Take(p, "window");
  for (const auto& [key, value] : window ? window.fields() : std::vector<ir::NamedAttribute>{}) {
    if (key == "pad") {
      std::vector<uint8_t> bytes;
      for (const Attribute& row : value.array()) {
        std::vector<int64_t> pair = row.AsInts();
        if (pair.size() != 2 || row.array().size() != 2) {
          return parser.ErrorAt(p.name_offset, "pad must be [[lo, hi], ...]");
        }
        for (int64_t v : pair) {
          for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * i)));
        }
      }
      int64_t rows = static_cast<int64_t>(value.array().size());
      Set(p, "padding", Attribute::DenseElements(
                            ir::Type::Tensor(ir::ElementType::kSI64, {rows, 2}), std::move(bytes)));
      continue;
    }
    std::vector<int64_t> ints;
    for (const Attribute& v : value.array()) {
      if (v.kind() == Attribute::Kind::kBool) ints.push_back(v.bool_value());
      else if (v.kind() == Attribute::Kind::kInt) ints.push_back(v.int_value());
      else return parser.ErrorAt(p.name_offset, "window entries must be lists of integers");
    }
    if (key == "stride") Set(p, "window_strides", Attribute::DenseArray(ir::ElementType::kSI64, ints));
    else if (key == "lhs_dilate") Set(p, "lhs_dilation", Attribute::DenseArray(ir::ElementType::kSI64, ints));
    else if (key == "rhs_dilate") Set(p, "rhs_dilation", Attribute::DenseArray(ir::ElementType::kSI64, ints));
    else if (key == "reverse") Set(p, "window_reversal", Attribute::DenseArray(ir::ElementType::kI1, ints));
    else return parser.ErrorAt(p.name_offset, "unknown window entry '" + key + "'");
  }
  return Status::Ok();
}

Status SymbolLiteral(Parser& parser, PrettyOp& p, std::string key, bool as_string) {
  if (p.literals.size() != 1 || p.literals[0].kind() != Attribute::Kind::kSymbolRef) {
    return parser.ErrorAt(p.name_offset, "expected @name");
  }
  Set(p, std::move(key), as_string ? Attribute::String(p.literals[0].str()) : p.literals[0]);
  p.literals.clear();
  return Status::Ok();
}
Status CustomCall(Parser& parser, PrettyOp& p) {
  return SymbolLiteral(parser, p, "call_target_name", true);
}
Status Call(Parser& parser, PrettyOp& p) { return SymbolLiteral(parser, p, "callee", false); }

Status Composite(Parser& parser, PrettyOp& p) {
  if (p.literals.size() != 1 || p.literals[0].kind() != Attribute::Kind::kString) {
    return parser.ErrorAt(p.name_offset, "composite needs a quoted name");
  }
  Set(p, "name", p.literals[0]);
  p.literals.clear();
  return Status::Ok();
}

Status TopK(Parser& parser, PrettyOp& p) {
  TPUSIM_RETURN_IF_ERROR(MoveInt(parser, p, "k", "k"));
  if (Attribute s = Take(p, "is_stable")) Set(p, "is_stable", s);
  return Status::Ok();
}

Status Cholesky(Parser&, PrettyOp& p) {
  if (Attribute lower = Take(p, "lower")) Set(p, "lower", lower);
  return Status::Ok();
}
Status Rng(Parser& parser, PrettyOp& p) {
  return MoveEnum(parser, p, "distribution", "rng_distribution", "stablehlo.rng_distribution");
}
Status RngBitGenerator(Parser& parser, PrettyOp& p) {
  return MoveEnum(parser, p, "algorithm", "rng_algorithm", "stablehlo.rng_algorithm");
}

// check.* and interpreter.* ops: a literal `value` and named options.
Status CheckOp(Parser& parser, PrettyOp& p) {
  if (!p.literals.empty()) {
    if (p.literals.size() != 1 || p.literals[0].kind() != Attribute::Kind::kDenseElements) {
      return parser.ErrorAt(p.name_offset, "expected one dense<...> literal");
    }
    Set(p, "value", p.literals[0]);
    p.literals.clear();
  }
  if (Attribute t = Take(p, "tolerance")) {
    double v = t.kind() == Attribute::Kind::kInt ? static_cast<double>(t.int_value())
               : t.kind() == Attribute::Kind::kFloat ? t.float_value() : -1;
    if (v < 0) return parser.ErrorAt(p.name_offset, "tolerance must be a non-negative number");
    Set(p, "tolerance", Attribute::Float(v, ir::ElementType::kF64));
  }
  TPUSIM_RETURN_IF_ERROR(MoveInt(parser, p, "max_ulp_difference", "max_ulp_difference",
                                 ir::ElementType::kSI64, false));
  TPUSIM_RETURN_IF_ERROR(MoveInt(parser, p, "min_ulp_difference", "min_ulp_difference",
                                 ir::ElementType::kSI64, false));
  TPUSIM_RETURN_IF_ERROR(MoveInt(parser, p, "iter", "iter", ir::ElementType::kSI64, false));
  if (Attribute id = Take(p, "probe_id")) Set(p, "probe_id", id);
  return Status::Ok();
}

const std::unordered_map<std::string_view, Form>& Forms() {
  static const auto* forms = [] {
    auto* m = new std::unordered_map<std::string_view, Form>;
    for (std::string_view n :
         {"abs", "add", "and", "atan2", "cbrt", "ceil", "clamp", "convert",
          "bitcast_convert", "cosine", "count_leading_zeros", "divide", "exponential",
          "exponential_minus_one", "floor", "imag", "is_finite", "log", "log_plus_one",
          "logistic", "maximum", "minimum", "multiply", "negate", "not", "or", "popcnt", "power",
          "real", "remainder", "reshape", "round_nearest_afz", "round_nearest_even", "rsqrt",
          "shift_left", "shift_right_arithmetic", "shift_right_logical", "sign", "sine", "sqrt",
          "subtract", "tan", "tanh", "xor", "dynamic_update_slice", "dynamic_reshape",
          "dynamic_pad", "real_dynamic_slice", "uniform_quantize", "uniform_dequantize",
          "dot"}) {
      m->emplace(n, Form{Sig::kSame, NoAttrs});
    }
    m->insert_or_assign("dot", Form{Sig::kSame, Precision});
    const std::pair<std::string_view, Form> special[] = {
        {"select", {Sig::kSelect, NoAttrs}},
        {"complex", {Sig::kComplex, NoAttrs}},
        {"tuple", {Sig::kResults, NoAttrs}},
        {"after_all", {Sig::kResults, NoAttrs}},
        {"create_token", {Sig::kResults, NoAttrs}},
        {"replica_id", {Sig::kResults, NoAttrs}},
        {"partition_id", {Sig::kResults, NoAttrs}},
        {"optimization_barrier", {Sig::kPassThrough, NoAttrs}},
        {"return", {Sig::kOperands, NoAttrs}},
        {"constant", {Sig::kResults, Constant}},
        {"compare", {Sig::kSame, Compare}},
        {"iota", {Sig::kResults, Iota}},
        {"dynamic_iota", {Sig::kSame, Iota}},
        {"broadcast_in_dim", {Sig::kSame, BroadcastInDim}},
        {"dynamic_broadcast_in_dim", {Sig::kSame, DynamicBroadcastInDim}},
        {"transpose", {Sig::kSame, Transpose}},
        {"reverse", {Sig::kSame, Reverse}},
        {"concatenate", {Sig::kSame, Dimension}},
        {"get_dimension_size", {Sig::kSame, Dimension}},
        {"slice", {Sig::kSame, Slice}},
        {"get_tuple_element", {Sig::kSame, GetTupleElement}},
        {"pad", {Sig::kSame, Pad}},
        {"dynamic_slice", {Sig::kSame, DynamicSlice}},
        {"reduce_precision", {Sig::kSame, ReducePrecision}},
        {"fft", {Sig::kSame, Fft}},
        {"dot_general", {Sig::kSame, DotGeneral}},
        {"convolution", {Sig::kSame, Convolution}},
        {"custom_call", {Sig::kSame, CustomCall}},
        {"composite", {Sig::kSame, Composite}},
        {"cholesky", {Sig::kSame, Cholesky}},
        {"rng", {Sig::kSame, Rng}},
        {"rng_bit_generator", {Sig::kSame, RngBitGenerator}},
    };
    for (const auto& [n, f] : special) m->insert_or_assign(n, f);
    return m;
  }();
  return *forms;
}

// Ops outside the stablehlo dialect with pretty forms.
const std::unordered_map<std::string_view, Form>& OtherForms() {
  static const auto* forms = new std::unordered_map<std::string_view, Form>{
      {"func.return", {Sig::kOperands, NoAttrs}},
      {"sdy.return", {Sig::kOperands, NoAttrs}},
      {"func.call", {Sig::kSame, Call}},
      {"chlo.top_k", {Sig::kSame, TopK}},
      {"check.expect_eq", {Sig::kOperands, CheckOp}},
      {"check.expect_eq_const", {Sig::kOperands, CheckOp}},
      {"check.expect_almost_eq", {Sig::kOperands, CheckOp}},
      {"check.expect_almost_eq_const", {Sig::kOperands, CheckOp}},
      {"check.expect_close", {Sig::kOperands, CheckOp}},
      {"check.expect_serialized_eq", {Sig::kOperands, CheckOp}},
      {"interpreter.probe", {Sig::kPassThrough, CheckOp}},
      {"interpreter.print", {Sig::kOperands, NoAttrs}},
  };
  return *forms;
}

std::optional<Form> FindForm(std::string_view name) {
  if (name.starts_with("stablehlo.")) {
    auto it = Forms().find(name.substr(10));
    if (it != Forms().end()) return it->second;
    return std::nullopt;
  }
  auto it = OtherForms().find(name);
  if (it != OtherForms().end()) return it->second;
  if (name.starts_with("chlo.")) return Form{Sig::kSame, NoAttrs};  // unary/binary chlo ops
  return std::nullopt;
}

}  // namespace

// Fills p.operand_types / p.result_types from the signature per `sig` and
// checks them against the operands.
static Status ResolveTypes(Parser& parser, PrettyOp& p, Sig sig, bool has_signature) {
  size_t n = p.operands.size();
  if (!p.functional && has_signature) {
    std::vector<ir::Type>& list = p.type_list;
    switch (sig) {
      case Sig::kSame:
      case Sig::kSelect:
        if (sig == Sig::kSelect && list.size() == 2 && n == 3) {
          p.operand_types = {list[0], list[1], list[1]};
          p.result_types = {list[1]};
        } else if (list.size() == 1) {
          p.operand_types.assign(n, list[0]);
          p.result_types = {list[0]};
        } else {
          return parser.ErrorAt(p.signature_offset, "expected one type or a function type");
        }
        break;
      case Sig::kComplex:
        if (list.size() != 1 || !list[0].is_tensor() || !ir::IsComplex(list[0].element())) {
          return parser.ErrorAt(p.signature_offset, "expected a complex tensor type");
        }
        p.operand_types.assign(n, list[0].WithElement(ir::ComplexPartType(list[0].element())));
        p.result_types = {list[0]};
        break;
      case Sig::kResults:
        p.result_types = list;
        break;
      case Sig::kOperands:
      case Sig::kPassThrough:
        if (list.size() == 1 && n > 1) list.assign(n, list[0]);
        p.operand_types = list;
        if (sig == Sig::kPassThrough) p.result_types = list;
        break;
    }
  }
  if (p.operand_types.empty() && n > 0) {
    if (has_signature && sig != Sig::kResults) {
      return parser.ErrorAt(p.signature_offset, "missing operand types");
    }
    for (ir::Value v : p.operands) p.operand_types.push_back(v.type());
  }
  if (p.operand_types.size() != n) {
    return parser.ErrorAt(p.signature_offset, std::to_string(p.operand_types.size()) +
                                                  " operand types for " + std::to_string(n) +
                                                  " operands");
  }
  for (size_t i = 0; i < n; ++i) {
    TPUSIM_RETURN_IF_ERROR(parser.CheckType(p.operands[i], p.operand_types[i], p.signature_offset));
  }
  return Status::Ok();
}

// Items a rule did not use are errors, not silently dropped.
static Status CheckAllUsed(Parser& parser, const PrettyOp& p, std::string_view name) {
  std::string left;
  if (!p.keywords.empty()) left = "'" + p.keywords[0].first + " = ...'";
  else if (!p.idents.empty()) left = "'" + p.idents[0] + "'";
  else if (!p.literals.empty()) left = p.literals[0].ToString().substr(0, 40);
  else if (p.has_index_group) left = "an index list";
  if (left.empty()) return Status::Ok();
  return parser.ErrorAt(p.name_offset, "unexpected " + left + " in the pretty form of " +
                                           std::string(name));
}

Status Parser::ParsePrettyOp(std::string_view name, PrettyOp* p) {
  if (name == "stablehlo.reduce") return ParseReduce(p);
  if (name == "stablehlo.while") return ParseWhile(p);
  if (name == "chlo.scan") return ParseScan(p);
  if (name == "sdy.manual_computation") return ParseManualComputation(p);
  if (name == "sdy.sharding_constraint" || name == "sdy.reshard") return ParseSdyConstraint(p);
  std::optional<Form> form = FindForm(name);
  if (!form) {
    std::string message = "no pretty form known for '" + std::string(name) +
                          "'; write it in the generic \"" + std::string(name) + "\"(...) form";
    // Other ops of the dialects tpusim reads are valid input it cannot read.
    bool known_dialect = name.starts_with("stablehlo.") || name.starts_with("sdy.");
    return known_dialect ? UnimplementedAt(p->name_offset, message) : ErrorAt(p->name_offset, message);
  }
  TPUSIM_RETURN_IF_ERROR(ParsePrettyItems(p));
  if (tok_.is(TokenKind::kLBrace)) TPUSIM_RETURN_IF_ERROR(ParseAttributeDict(&p->op->attrs()));
  bool has_signature = tok_.is(TokenKind::kColon);
  if (has_signature) TPUSIM_RETURN_IF_ERROR(ParsePrettySignature(p));
  if (!has_signature) p->signature_offset = tok_.offset;
  TPUSIM_RETURN_IF_ERROR(ResolveTypes(*this, *p, form->sig, has_signature));
  TPUSIM_RETURN_IF_ERROR(form->rule(*this, *p));
  return CheckAllUsed(*this, *p, name);
}

}  // namespace tpusim::frontend

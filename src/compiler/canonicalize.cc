// Canonicalization: puts ops in one canonical form and applies algebraic
// identities that hold bit for bit (NaN and -0 included), in every function
// and nested region.
//
// Canonical forms: a constant operand of a commutative op goes on the right
// (compare mirrors its direction); transpose of transpose becomes one
// transpose, reshape of reshape one reshape. Identities: integer x+0, x-0,
// x*1, x/1, x|0, x^0, x&~0; float x+(-0.0), x-(+0.0), x*1, x/1; -(-x);
// not(not x); ops that move no data (identity transpose, same-shape reshape,
// broadcast_in_dim and slice, zero pad, reverse of size-1 dimensions,
// single-operand concatenate, convert to the same type); select with a
// constant splat predicate or equal branches; a dot_general of a broadcast
// that only adds the dot's batch dimensions reads the broadcast's operand
// instead (SimplifyDotOfBroadcast). An op is replaced only by a value of the
// same type and layout. Replaced ops are left for dce.
//
// Deliberately not: float x+0.0 (wrong for x = -0), x*0 (wrong for NaN, inf,
// -0), complex identities (inf*1 gives NaN parts), reassociation, and
// anything that reorders float arithmetic. One bit may differ: IEEE
// arithmetic quiets a signalling NaN and a removed op does not (LLVM and MLIR
// fold these identities alike). So that constants keep their exact value,
// arithmetic identities never replace an op by a constant; constant-fold
// evaluates those ops instead.
#include <algorithm>
#include <cmath>
#include <functional>
#include <string_view>
#include <unordered_map>

#include "tpusim/compiler/pass.h"
#include "tpusim/ir/rewrite.h"
#include "tpusim/numerics/float_formats.h"

namespace tpusim::compiler {
namespace {

using ir::Attribute;
using ir::ElementType;
using ir::Operation;
using ir::Value;

// --- Constants

ir::Attribute ConstantValue(Value v) {
  const Operation* def = v.defining_op();
  if (def == nullptr || def->name_str() != "stablehlo.constant") return {};
  Attribute a = def->attr("value");
  return a.kind() == Attribute::Kind::kDenseElements ? a : Attribute();
}

bool IsConstant(Value v) { return static_cast<bool>(ConstantValue(v)); }

// Whether `v` is a constant whose every element satisfies `pred`.
bool AllElements(Value v, const std::function<bool(ElementType, const uint8_t*)>& pred) {
  Attribute a = ConstantValue(v);
  if (!a) return false;
  ElementType e = a.type().element();
  size_t width = ir::StorageBytes(e);
  const std::vector<uint8_t>& bytes = a.bytes();
  for (size_t i = 0; i + width <= bytes.size(); i += width) {
    if (!pred(e, bytes.data() + i)) return false;
  }
  return true;
}

bool IsIntLike(ElementType e) { return ir::IsInteger(e) || ir::IsBool(e); }

bool IsZero(Value v) {
  return AllElements(v, [](ElementType e, const uint8_t* p) {
    return IsIntLike(e) && numerics::LoadAsUint64(e, p) == 0;
  });
}

bool IsOne(Value v) {
  return AllElements(v, [](ElementType e, const uint8_t* p) {
    if (IsIntLike(e)) return numerics::LoadAsInt64(e, p) == 1;
    return ir::IsFloat(e) && numerics::LoadAsDouble(e, p) == 1.0;
  });
}

bool IsAllOnes(Value v) {
  return AllElements(v, [](ElementType e, const uint8_t* p) {
    if (ir::IsBool(e)) return *p == 1;
    if (ir::IsSignedInt(e)) return numerics::LoadAsInt64(e, p) == -1;
    return ir::IsUnsignedInt(e) &&
           numerics::LoadAsUint64(e, p) == (~uint64_t{0} >> (64 - ir::BitWidth(e)));
  });
}

// A float zero of the given sign. Types without -0 (the FNUZ formats) never
// hold one, so they never match a -0.0 identity.
bool IsFloatZero(Value v, bool negative) {
  return AllElements(v, [negative](ElementType e, const uint8_t* p) {
    if (!ir::IsFloat(e)) return false;
    double d = numerics::LoadAsDouble(e, p);
    return d == 0.0 && std::signbit(d) == negative;
  });
}

bool HasNaN(Value v) {
  return !AllElements(v, [](ElementType e, const uint8_t* p) {
    return !ir::IsFloat(e) || !std::isnan(numerics::LoadAsDouble(e, p));
  });
}

// The splat boolean value of a constant predicate; -1 if not a splat.
int SplatBool(Value v) {
  if (AllElements(v, [](ElementType, const uint8_t* p) { return *p != 0; })) return 1;
  if (AllElements(v, [](ElementType, const uint8_t* p) { return *p == 0; })) return 0;
  return -1;
}

ElementType ElementOf(const Operation& op) { return op.result(0).type().element(); }

bool OperandIs(const Operation& op, int i, std::string_view name) {
  const Operation* def = op.operand(i).defining_op();
  return def != nullptr && def->name_str() == name;
}

bool IsIota(const std::vector<int64_t>& v) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

bool AllZero(const std::vector<int64_t>& v) {
  for (int64_t x : v) {
    if (x != 0) return false;
  }
  return true;
}

// --- Canonical order

// Whether swapping the operands of `op` keeps every result bit. Float add
// and multiply commute except in which NaN's payload survives when both
// operands are NaN, so a constant with NaNs stays put; maximum and minimum
// may pick between +0 and -0 by position.
bool Commutes(const Operation& op) {
  std::string_view n = op.name_str();
  ElementType e = ElementOf(op);
  if (n == "stablehlo.and" || n == "stablehlo.or" || n == "stablehlo.xor") return true;
  if (n == "stablehlo.maximum" || n == "stablehlo.minimum") return IsIntLike(e);
  if (n != "stablehlo.add" && n != "stablehlo.multiply") return false;
  return IsIntLike(e) || (ir::IsFloat(e) && !HasNaN(op.operand(0)));
}

const char* MirroredDirection(const std::string& d) {
  static const std::unordered_map<std::string, const char*> kMirror = {
      {"EQ", "EQ"}, {"NE", "NE"}, {"LT", "GT"}, {"GT", "LT"}, {"LE", "GE"}, {"GE", "LE"}};
  auto it = kMirror.find(d);
  return it == kMirror.end() ? nullptr : it->second;
}

// Moves a lone constant operand of a commutative op or compare to the right.
void ConstantsRight(Operation& op) {
  if (op.num_operands() != 2 || op.num_results() != 1 || !op.result(0).type().is_tensor() ||
      !IsConstant(op.operand(0)) || IsConstant(op.operand(1))) {
    return;
  }
  if (op.name_str() == "stablehlo.compare") {
    Attribute dir = op.attr("comparison_direction");
    if (dir.kind() != Attribute::Kind::kEnum) return;
    const char* mirrored = MirroredDirection(dir.str());
    if (mirrored == nullptr) return;
    op.attrs().Set("comparison_direction", Attribute::Enum(dir.name(), mirrored));
  } else if (!Commutes(op)) {
    return;
  }
  Value lhs = op.operand(0);
  op.SetOperand(0, op.operand(1));
  op.SetOperand(1, lhs);
}

// --- Simplifications: each returns the value that replaces result 0, or a
// null Value; some first rewrite the op in place into a simpler one.

using Simplifier = Value (*)(Operation& op);

// Arithmetic identities keep the non-constant operand only (see the top).
Value Keep(Value v) { return IsConstant(v) ? Value() : v; }

Value SimplifyAdd(Operation& op) {
  ElementType e = ElementOf(op);
  bool identity = IsIntLike(e) ? IsZero(op.operand(1)) : IsFloatZero(op.operand(1), true);
  return identity ? Keep(op.operand(0)) : Value();
}

Value SimplifySubtract(Operation& op) {
  ElementType e = ElementOf(op);
  bool identity = IsIntLike(e) ? IsZero(op.operand(1)) : IsFloatZero(op.operand(1), false);
  return identity ? Keep(op.operand(0)) : Value();
}

// x * 1 and x / 1 (IsOne matches no complex type).
Value SimplifyByOne(Operation& op) { return IsOne(op.operand(1)) ? Keep(op.operand(0)) : Value(); }

Value SimplifyOrXor(Operation& op) { return IsZero(op.operand(1)) ? op.operand(0) : Value(); }

Value SimplifyAnd(Operation& op) { return IsAllOnes(op.operand(1)) ? op.operand(0) : Value(); }

// -(-x) and not(not x).
Value SimplifyInvolution(Operation& op) {
  if (!OperandIs(op, 0, op.name_str())) return Value();
  return Keep(op.operand(0).defining_op()->operand(0));
}

Value SimplifyTranspose(Operation& op) {
  std::vector<int64_t> perm = op.attr("permutation").AsInts();
  if (OperandIs(op, 0, "stablehlo.transpose")) {
    const Operation& inner = *op.operand(0).defining_op();
    std::vector<int64_t> first = inner.attr("permutation").AsInts();
    std::vector<int64_t> composed(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) {
      if (perm[i] < 0 || perm[i] >= static_cast<int64_t>(first.size())) return Value();
      composed[i] = first[perm[i]];
    }
    op.SetOperand(0, inner.operand(0));
    op.attrs().Set("permutation", Attribute::DenseArray(ElementType::kSI64, composed));
    perm = std::move(composed);
  }
  return IsIota(perm) ? op.operand(0) : Value();
}

Value SimplifyReshape(Operation& op) {
  if (OperandIs(op, 0, "stablehlo.reshape")) {
    op.SetOperand(0, op.operand(0).defining_op()->operand(0));
  }
  return op.operand(0);  // kept only if the types match
}

// Identities when the result has the operand's type (CanReplace checks).
Value SimplifyConvert(Operation& op) { return Keep(op.operand(0)); }
Value SimplifySlice(Operation& op) { return op.operand(0); }

Value SimplifyBroadcast(Operation& op) {
  return IsIota(op.attr("broadcast_dimensions").AsInts()) ? op.operand(0) : Value();
}

Value SimplifyPad(Operation& op) {
  bool none = AllZero(op.attr("edge_padding_low").AsInts()) &&
              AllZero(op.attr("edge_padding_high").AsInts()) &&
              AllZero(op.attr("interior_padding").AsInts());
  return none ? op.operand(0) : Value();
}

Value SimplifyReverse(Operation& op) {
  const ir::Type& t = op.operand(0).type();
  for (int64_t d : op.attr("dimensions").AsInts()) {
    if (d < 0 || d >= t.rank() || t.dim(d) > 1) return Value();
  }
  return op.operand(0);
}

Value SimplifyConcatenate(Operation& op) {
  return op.num_operands() == 1 ? op.operand(0) : Value();
}

Value SimplifySelect(Operation& op) {
  if (op.operand(1) == op.operand(2)) return op.operand(1);
  int pred = SplatBool(op.operand(0));
  return pred < 0 ? Value() : op.operand(pred ? 1 : 2);
}

// --- Dots of broadcasts

// The dimension numbers of a dot_general, by field.
struct DotNumbers {
  std::vector<int64_t> batch[2], contract[2];  // [0] lhs, [1] rhs
};

DotNumbers ReadDotNumbers(const Operation& op) {
  Attribute dn = op.attr("dot_dimension_numbers");
  auto ints = [&](std::string_view key) {
    Attribute f = dn.kind() == Attribute::Kind::kStruct ? dn.Get(key) : Attribute();
    return f ? f.AsInts() : std::vector<int64_t>{};
  };
  return DotNumbers{{ints("lhs_batching_dimensions"), ints("rhs_batching_dimensions")},
                    {ints("lhs_contracting_dimensions"), ints("rhs_contracting_dimensions")}};
}

Attribute DotNumbersAttr(const DotNumbers& d) {
  auto list = [](const std::vector<int64_t>& v) {
    std::vector<Attribute> a;
    for (int64_t x : v) a.push_back(Attribute::Int(x));
    return Attribute::Array(std::move(a));
  };
  std::vector<ir::NamedAttribute> fields;  // empty lists left out, as printed
  const char* names[2][2] = {{"lhs_batching_dimensions", "rhs_batching_dimensions"},
                             {"lhs_contracting_dimensions", "rhs_contracting_dimensions"}};
  for (int kind = 0; kind < 2; ++kind) {
    for (int side = 0; side < 2; ++side) {
      const std::vector<int64_t>& v = kind == 0 ? d.batch[side] : d.contract[side];
      if (!v.empty()) fields.emplace_back(names[kind][side], list(v));
    }
  }
  return Attribute::Struct("stablehlo.dot", std::move(fields));
}

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Where each result dimension of a dot_general comes from: {'B', i} for
// batch pair i, {'L', d} and {'R', d} for a free dimension d of lhs or rhs.
using DimOrigin = std::pair<char, int64_t>;

// Free dimensions of one side in result order, named by their origin;
// `origin(d)` names operand dimension d.
std::vector<DimOrigin> FreeOrigins(int64_t rank, const std::vector<int64_t>& batch,
                                   const std::vector<int64_t>& contract,
                                   const std::function<DimOrigin(int64_t)>& origin) {
  std::vector<DimOrigin> out;
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(batch, d) && !Contains(contract, d)) out.push_back(origin(d));
  }
  return out;
}

// dot_general(x, broadcast_in_dim(w)) where the broadcast only adds the
// dot's batch dimensions on its side (ONNX MatMul of [B, M, K] by a [K, N]
// weight, as the ONNX front end and other exporters lower it) becomes
// dot_general(x, w): x's batch dimensions turn into free ones, and the
// weight is read once instead of once per batch element. Every result
// element is the same sum of the same products. Done in place, and only
// when the result keeps its type and dimension order (x's batch dimensions
// lead, in order); either side.
Value SimplifyDotOfBroadcast(Operation& op) {
  if (op.num_operands() != 2) return Value();
  DotNumbers d = ReadDotNumbers(op);
  if (d.batch[0].empty() || d.batch[0].size() != d.batch[1].size()) return Value();
  for (int side : {1, 0}) {
    const Operation* b = op.operand(side).defining_op();
    if (b == nullptr || b->name_str() != "stablehlo.broadcast_in_dim" || b->num_operands() != 1) {
      continue;
    }
    const ir::Type& src = b->operand(0).type();
    const ir::Type& wide = op.operand(side).type();
    const std::vector<int64_t> dims = b->attr("broadcast_dimensions").AsInts();
    if (!src.is_tensor() || !wide.is_tensor() || static_cast<int64_t>(dims.size()) != src.rank() ||
        !ir::SameLayout(src, wide)) {
      continue;
    }
    // The broadcast keeps the order of its operand's dimensions and sizes,
    // and the dimensions it adds are exactly this side's batch dimensions.
    bool ok = true;
    std::vector<int64_t> to_src(static_cast<size_t>(wide.rank()), -1);
    for (size_t i = 0; i < dims.size() && ok; ++i) {
      ok = dims[i] >= 0 && dims[i] < wide.rank() && (i == 0 || dims[i] > dims[i - 1]) &&
           src.dim(static_cast<int64_t>(i)) == wide.dim(dims[i]) &&
           !Contains(d.batch[side], dims[i]);
      if (ok) to_src[dims[i]] = static_cast<int64_t>(i);
    }
    if (!ok || static_cast<size_t>(wide.rank()) - dims.size() != d.batch[side].size()) continue;
    DotNumbers n;
    for (int64_t c : d.contract[side]) n.contract[side].push_back(to_src[c]);
    n.contract[1 - side] = d.contract[1 - side];
    // The result's dimensions, before and after, named by origin.
    const int64_t lhs_rank = op.operand(0).type().rank(), rhs_rank = op.operand(1).type().rank();
    auto plain = [](char c) { return [c](int64_t x) { return DimOrigin{c, x}; }; };
    std::vector<DimOrigin> before;
    for (size_t i = 0; i < d.batch[0].size(); ++i) before.push_back({'B', static_cast<int64_t>(i)});
    for (int s = 0; s < 2; ++s) {
      for (DimOrigin o : FreeOrigins(s == 0 ? lhs_rank : rhs_rank, d.batch[s], d.contract[s],
                                     plain(s == 0 ? 'L' : 'R'))) {
        before.push_back(o);
      }
    }
    // After: the broadcast side's dimensions are its operand's; the other
    // side's batch dimensions are free ones.
    auto widened = [&](int64_t x) { return DimOrigin{side == 0 ? 'L' : 'R', dims[x]}; };
    auto unbatched = [&](int64_t x) {
      const std::vector<int64_t>& batch = d.batch[1 - side];
      auto it = std::find(batch.begin(), batch.end(), x);
      return it == batch.end() ? DimOrigin{side == 0 ? 'R' : 'L', x}
                               : DimOrigin{'B', it - batch.begin()};
    };
    const int64_t other_rank = side == 0 ? rhs_rank : lhs_rank;
    std::vector<DimOrigin> after = FreeOrigins(src.rank(), {}, n.contract[side], widened);
    std::vector<DimOrigin> other = FreeOrigins(other_rank, {}, n.contract[1 - side], unbatched);
    after.insert(side == 0 ? after.end() : after.begin(), other.begin(), other.end());
    if (before != after) continue;
    op.SetOperand(side, b->operand(0));
    op.attrs().Set("dot_dimension_numbers", DotNumbersAttr(n));
    return Value();
  }
  return Value();
}

const std::unordered_map<std::string_view, Simplifier>& Simplifiers() {
  static const std::unordered_map<std::string_view, Simplifier> kTable = {
      {"stablehlo.add", SimplifyAdd},
      {"stablehlo.subtract", SimplifySubtract},
      {"stablehlo.multiply", SimplifyByOne},
      {"stablehlo.divide", SimplifyByOne},
      {"stablehlo.or", SimplifyOrXor},
      {"stablehlo.xor", SimplifyOrXor},
      {"stablehlo.and", SimplifyAnd},
      {"stablehlo.negate", SimplifyInvolution},
      {"stablehlo.not", SimplifyInvolution},
      {"stablehlo.transpose", SimplifyTranspose},
      {"stablehlo.reshape", SimplifyReshape},
      {"stablehlo.convert", SimplifyConvert},
      {"stablehlo.slice", SimplifySlice},
      {"stablehlo.broadcast_in_dim", SimplifyBroadcast},
      {"stablehlo.pad", SimplifyPad},
      {"stablehlo.reverse", SimplifyReverse},
      {"stablehlo.concatenate", SimplifyConcatenate},
      {"stablehlo.select", SimplifySelect},
      {"stablehlo.dot_general", SimplifyDotOfBroadcast},
  };
  return kTable;
}

// --- Driver

// Whether uses of `result` may read `by` instead: same type and layout.
bool CanReplace(Value result, Value by) {
  return by && by != result && result.type() == by.type() &&
         ir::SameLayout(result.type(), by.type());
}

// One forward walk reaches the fixed point: every use follows its definition
// (nested regions after their op), so by the time an op is visited its
// operands are final and the ops defining them already simplified.
class Canonicalizer {
 public:
  void Run(ir::Function& f) {
    ir::Walk(f.body(), [this](Operation& op) { Visit(op); });
    f.Renumber();
  }

 private:
  void Visit(Operation& op) {
    for (int i = 0; i < op.num_operands(); ++i) {
      auto it = replaced_.find(op.operand(i).impl());
      if (it != replaced_.end()) op.SetOperand(i, it->second);
    }
    if (op.num_results() != 1 || op.num_operands() == 0 || !op.result(0).type().is_tensor()) {
      return;
    }
    ConstantsRight(op);
    auto it = Simplifiers().find(op.name_str());
    if (it == Simplifiers().end()) return;
    Value by = it->second(op);
    if (CanReplace(op.result(0), by)) replaced_[op.result(0).impl()] = by;
  }

  ir::ValueMap replaced_;  // op result -> the value its users now read
};

}  // namespace

Status RunCanonicalize(ir::Module& module, PassContext&) {
  for (const auto& f : module.functions()) Canonicalizer().Run(*f);
  return Status::Ok();
}

}  // namespace tpusim::compiler

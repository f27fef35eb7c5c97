#include "ops/kernels/region_kernels.h"

#include <string_view>

namespace tpusim::ops {
namespace {

std::optional<BinaryKind> BinaryKindOf(std::string_view name) {
  if (name == "stablehlo.add") return BinaryKind::kAdd;
  if (name == "stablehlo.multiply") return BinaryKind::kMultiply;
  if (name == "stablehlo.maximum") return BinaryKind::kMaximum;
  if (name == "stablehlo.minimum") return BinaryKind::kMinimum;
  if (name == "stablehlo.and") return BinaryKind::kAnd;
  if (name == "stablehlo.or") return BinaryKind::kOr;
  if (name == "stablehlo.xor") return BinaryKind::kXor;
  return std::nullopt;
}

std::optional<CompareDirection> DirectionOf(std::string_view s) {
  if (s == "EQ") return CompareDirection::kEq;
  if (s == "NE") return CompareDirection::kNe;
  if (s == "GE") return CompareDirection::kGe;
  if (s == "GT") return CompareDirection::kGt;
  if (s == "LE") return CompareDirection::kLe;
  if (s == "LT") return CompareDirection::kLt;
  return std::nullopt;
}

// The block of a single-block region whose body is exactly one op followed
// by a stablehlo.return of that op's single result; null otherwise.
const ir::Operation* SingleOpBody(const ir::Region& region) {
  if (region.num_blocks() != 1) return nullptr;
  const ir::Block& block = region.front();
  if (block.ops().size() != 2) return nullptr;
  const ir::Operation* op = block.ops()[0].get();
  const ir::Operation* ret = block.ops()[1].get();
  if (ret->name_str() != "stablehlo.return" || ret->num_operands() != 1 ||
      op->num_results() != 1 || ret->operand(0) != op->result(0) ||
      op->num_regions() != 0) {
    return nullptr;
  }
  return op;
}

bool IsScalar(const ir::Type& t) { return t.is_tensor() && t.rank() == 0; }

}  // namespace

std::optional<BinaryKind> MatchBinaryRegion(const ir::Region& region) {
  const ir::Operation* op = SingleOpBody(region);
  if (op == nullptr || region.front().num_arguments() != 2 || op->num_operands() != 2) {
    return std::nullopt;
  }
  const ir::Block& block = region.front();
  const ir::Value a = block.argument(0), b = block.argument(1);
  const bool uses_both = (op->operand(0) == a && op->operand(1) == b) ||
                         (op->operand(0) == b && op->operand(1) == a);
  if (!uses_both || !IsScalar(a.type()) || a.type() != b.type() ||
      op->result(0).type() != a.type()) {
    return std::nullopt;
  }
  const std::optional<BinaryKind> kind = BinaryKindOf(op->name_str());
  // A complex product is not commutative in its last bit (ComplexMultiply):
  // the kernels pass the block arguments in order, so a swapped one runs the
  // region.
  if (kind == BinaryKind::kMultiply && ir::IsComplex(a.type().element()) &&
      op->operand(0) != a) {
    return std::nullopt;
  }
  return kind;
}

bool MatchReturnOfArgument(const ir::Region& region, int arg) {
  if (region.num_blocks() != 1) return false;
  const ir::Block& block = region.front();
  if (block.ops().size() != 1 || arg >= block.num_arguments()) return false;
  const ir::Operation* ret = block.ops()[0].get();
  return ret->name_str() == "stablehlo.return" && ret->num_operands() == 1 &&
         ret->operand(0) == block.argument(arg);
}

namespace {

// The op defining `v` if it is named `name`; null otherwise.
const ir::Operation* DefinedBy(ir::Value v, std::string_view name) {
  const ir::Operation* op = v.is_block_argument() ? nullptr : v.defining_op();
  return op != nullptr && op->name_str() == name ? op : nullptr;
}

// The bits of the 0-d constant `v`, if it is one.
std::optional<uint64_t> ScalarConstantBits(ir::Value v) {
  const ir::Operation* op = DefinedBy(v, "stablehlo.constant");
  if (op == nullptr) return std::nullopt;
  ir::Attribute value = op->attr("value");
  if (!value || value.kind() != ir::Attribute::Kind::kDenseElements ||
      value.type().rank() != 0 || value.bytes().size() > sizeof(uint64_t)) {
    return std::nullopt;
  }
  uint64_t bits = 0;
  std::memcpy(&bits, value.bytes().data(), value.bytes().size());
  return bits;
}

// `op` is a compare `direction` (FLOAT or untyped) whose first operand is x.
bool IsCompare(const ir::Operation* op, std::string_view direction, ir::Value x) {
  if (op == nullptr || op->num_operands() != 2 || op->operand(0) != x) return false;
  ir::Attribute dir = op->attr("comparison_direction");
  ir::Attribute type = op->attr("compare_type");
  return dir && dir.kind() == ir::Attribute::Kind::kEnum && dir.str() == direction &&
         (!type || (type.kind() == ir::Attribute::Kind::kEnum && type.str() == "FLOAT"));
}

// The bits are a zero or a NaN of element type e (f32, f64, bf16 or f16).
bool IsZeroOrNanBits(ir::ElementType e, uint64_t bits, bool nan) {
  uint64_t inf = 0, sign = 0;
  switch (e) {
    case ir::ElementType::kF32: inf = 0x7F800000; sign = 0x80000000; break;
    case ir::ElementType::kF64: inf = 0x7FF0000000000000; sign = uint64_t{1} << 63; break;
    case ir::ElementType::kBF16: inf = 0x7F80; sign = 0x8000; break;
    case ir::ElementType::kF16: inf = 0x7C00; sign = 0x8000; break;
    default: return false;
  }
  const uint64_t magnitude = bits & ~sign & (2 * sign - 1);
  return nan ? magnitude > inf : magnitude == 0;
}

// Matches v = select(x != x, NAN, select(x == ZERO, ZERO', x)) with x a
// block argument of element type e, NAN a NaN and ZERO, ZERO' zeros (of
// either sign); fills m's NaN and zero bits.
std::optional<ir::Value> MatchCanonicalized(ir::Value v, ir::ElementType e, CompareMatch& m) {
  const ir::Operation* outer = DefinedBy(v, "stablehlo.select");
  if (outer == nullptr || outer->num_operands() != 3) return std::nullopt;
  const ir::Operation* inner = DefinedBy(outer->operand(2), "stablehlo.select");
  if (inner == nullptr || inner->num_operands() != 3) return std::nullopt;
  const ir::Value x = inner->operand(2);
  if (!x.is_block_argument()) return std::nullopt;
  const ir::Operation* is_nan = DefinedBy(outer->operand(0), "stablehlo.compare");
  const ir::Operation* is_zero = DefinedBy(inner->operand(0), "stablehlo.compare");
  if (!IsCompare(is_nan, "NE", x) || is_nan->operand(1) != x || !IsCompare(is_zero, "EQ", x)) {
    return std::nullopt;
  }
  std::optional<uint64_t> nan = ScalarConstantBits(outer->operand(1));
  std::optional<uint64_t> zero = ScalarConstantBits(inner->operand(1));
  std::optional<uint64_t> zero_cmp = ScalarConstantBits(is_zero->operand(1));
  if (!nan || !zero || !zero_cmp || !IsZeroOrNanBits(e, *nan, true) ||
      !IsZeroOrNanBits(e, *zero, false) || !IsZeroOrNanBits(e, *zero_cmp, false)) {
    return std::nullopt;
  }
  m.canonical = true;
  m.nan_bits = *nan;
  m.zero_bits = *zero;
  return x;
}

}  // namespace

std::optional<CompareMatch> MatchCompareRegion(const ir::Region& region) {
  if (region.num_blocks() != 1 || region.front().num_arguments() < 2) return std::nullopt;
  const ir::Block& block = region.front();
  const ir::Operation* ret = block.terminator();
  const bool returns = ret != nullptr && (ret->name_str() == "stablehlo.return" ||
                                          ret->name_str() == "func.return");
  if (!returns || ret->num_operands() != 1) return std::nullopt;
  const ir::Operation* op = DefinedBy(ret->operand(0), "stablehlo.compare");
  if (op == nullptr || op->num_operands() != 2 || op->parent() != &block ||
      !IsScalar(block.argument(0).type()) ||
      block.argument(0).type() != block.argument(1).type()) {
    return std::nullopt;
  }
  ir::Attribute dir = op->attr("comparison_direction");
  if (!dir || dir.kind() != ir::Attribute::Kind::kEnum) return std::nullopt;
  std::optional<CompareDirection> d = DirectionOf(dir.str());
  if (!d) return std::nullopt;
  CompareMatch match{.direction = *d};
  // The comparison type must be the natural one for the element type; a
  // SIGNED compare of unsigned values (or the like) takes the region path.
  const ir::ElementType e = block.argument(0).type().element();
  ir::Attribute type = op->attr("compare_type");
  const std::string t = type && type.kind() == ir::Attribute::Kind::kEnum ? type.str() : "";
  if (ir::IsFloat(e)) {
    if (t == "TOTALORDER") match.total_order = true;
    else if (!t.empty() && t != "FLOAT") return std::nullopt;
  } else if (ir::IsSignedInt(e)) {
    if (!t.empty() && t != "SIGNED") return std::nullopt;
  } else if (ir::IsUnsignedInt(e) || ir::IsBool(e)) {
    if (!t.empty() && t != "UNSIGNED") return std::nullopt;
  } else {
    return std::nullopt;
  }
  ir::Value lhs = op->operand(0), rhs = op->operand(1);
  if (match.total_order && lhs != block.argument(0)) {
    CompareMatch a = match, b = match;
    std::optional<ir::Value> x = MatchCanonicalized(lhs, e, a);
    std::optional<ir::Value> y = MatchCanonicalized(rhs, e, b);
    if (!x || !y || a.nan_bits != b.nan_bits || a.zero_bits != b.zero_bits) {
      return std::nullopt;
    }
    match = a;
    lhs = *x;
    rhs = *y;
  }
  if (lhs != block.argument(0) || rhs != block.argument(1)) return std::nullopt;
  return match;
}

}  // namespace tpusim::ops

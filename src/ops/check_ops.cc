// Check ops: the assertions of conformance programs (the check dialect and
// stablehlo.custom_call @check.expect_*), and the interpreter's debugging ops
// (interpreter.probe, interpreter.print). A failed check is
// kFailedPrecondition with the number of differing elements and the first one.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <mutex>

#include "ops/util/op_util.h"
#include "ops/util/work_util.h"
#include "tpusim/numerics/float_formats.h"
#include "tpusim/ops/custom_call.h"

namespace tpusim::ops {
namespace {

using ir::ElementType;

// Checks and debugging ops are scaffolding around the program, not part of
// what it computes: the timing model counts them as free.
Work NoWork(const ir::Operation&) { return {.free = true}; }

// How two elements must relate for a check to hold.
struct Criterion {
  enum Mode { kExact, kTolerance, kUlp } mode = kExact;
  double tolerance = 0;  // kTolerance: |actual - expected| <= tolerance
  uint64_t min_ulp = 0;  // kUlp: distance in [min_ulp, max_ulp]
  uint64_t max_ulp = 0;
};

// The raw bits of one stored real float element.
uint64_t FloatBits(ElementType t, const uint8_t* p) {
  switch (ir::StorageBytes(t)) {
    case 1:
      return *p;
    case 2: {
      uint16_t b;
      std::memcpy(&b, p, 2);
      return b;
    }
    case 4: {
      uint32_t b;
      std::memcpy(&b, p, 4);
      return b;
    }
    default: {
      uint64_t b;
      std::memcpy(&b, p, 8);
      return b;
    }
  }
}

// Units in the last place between two finite values of float type t: the
// distance between their positions in the type's ordered list of values.
uint64_t UlpDistance(ElementType t, const uint8_t* a, const uint8_t* b) {
  uint64_t x = FloatBits(t, a), y = FloatBits(t, b);
  if (t == ElementType::kF8E8M0FNU) return x > y ? x - y : y - x;  // no sign bit
  int w = ir::BitWidth(t);
  uint64_t sign = uint64_t{1} << (w - 1);
  uint64_t mx = x & (sign - 1), my = y & (sign - 1);
  if (((x ^ y) & sign) != 0) return mx + my;  // across zero
  return mx > my ? mx - my : my - mx;
}

// Whether one real float element pair satisfies `c`. Non-finite values must
// match exactly, except that any NaN matches any NaN.
bool FloatHolds(ElementType t, const uint8_t* a, const uint8_t* b, const Criterion& c) {
  double x = numerics::LoadAsDouble(t, a), y = numerics::LoadAsDouble(t, b);
  if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
  switch (c.mode) {
    case Criterion::kExact:
      return FloatBits(t, a) == FloatBits(t, b);
    case Criterion::kTolerance:
      if (!std::isfinite(x) || !std::isfinite(y)) return x == y;
      return std::fabs(x - y) <= c.tolerance;
    case Criterion::kUlp: {
      if (!std::isfinite(x) || !std::isfinite(y)) return x == y;
      uint64_t d = UlpDistance(t, a, b);
      return d >= c.min_ulp && d <= c.max_ulp;
    }
  }
  return false;
}

bool ElementHolds(ElementType t, const uint8_t* a, const uint8_t* b, const Criterion& c) {
  if (ir::IsComplex(t)) {
    ElementType part = ir::ComplexPartType(t);
    int w = ir::StorageBytes(part);
    return FloatHolds(part, a, b, c) && FloatHolds(part, a + w, b + w, c);
  }
  if (ir::IsFloat(t)) return FloatHolds(t, a, b, c);
  if (c.mode == Criterion::kUlp && !ir::IsBool(t)) {
    bool is_signed = ir::IsSignedInt(t);
    uint64_t x = numerics::LoadAsUint64(t, a), y = numerics::LoadAsUint64(t, b);
    bool x_less = is_signed ? numerics::LoadAsInt64(t, a) < numerics::LoadAsInt64(t, b) : x < y;
    uint64_t d = x_less ? y - x : x - y;
    return d >= c.min_ulp && d <= c.max_ulp;
  }
  return std::memcmp(a, b, ir::StorageBytes(t)) == 0;
}

std::string FormatDouble(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string FormatElement(ElementType t, const uint8_t* p) {
  char buf[96];
  if (ir::IsComplex(t)) {
    ElementType part = ir::ComplexPartType(t);
    std::snprintf(buf, sizeof buf, "(%.17g, %.17g)", numerics::LoadAsDouble(part, p),
                  numerics::LoadAsDouble(part, p + ir::StorageBytes(part)));
  } else if (ir::IsFloat(t)) {
    std::snprintf(buf, sizeof buf, "%.17g", numerics::LoadAsDouble(t, p));
  } else if (ir::IsBool(t)) {
    return *p ? "true" : "false";
  } else if (ir::IsUnsignedInt(t)) {
    return std::to_string(numerics::LoadAsUint64(t, p));
  } else {
    return std::to_string(numerics::LoadAsInt64(t, p));
  }
  return buf;
}

std::string FormatIndex(const ir::Shape& shape, int64_t linear) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] == 0 ? 0 : linear % shape[d];
    linear = shape[d] == 0 ? 0 : linear / shape[d];
  }
  return FormatInts(index);
}

Status Compare(const Tensor& actual, const Tensor& expected, const Criterion& c) {
  if (actual.type() != expected.type()) {
    return InvalidArgument("compares " + actual.type().ToString() + " with " +
                           expected.type().ToString());
  }
  ElementType t = actual.element();
  int w = ir::StorageBytes(t);
  int64_t n = actual.num_elements(), bad = 0, first = -1;
  for (int64_t i = 0; i < n; ++i) {
    if (!ElementHolds(t, actual.raw() + i * w, expected.raw() + i * w, c)) {
      if (bad++ == 0) first = i;
    }
  }
  if (bad == 0) return Status::Ok();
  std::string how =
      c.mode == Criterion::kExact ? "exactly"
      : c.mode == Criterion::kTolerance
          ? "within " + FormatDouble(c.tolerance)
          : "within [" + std::to_string(c.min_ulp) + ", " + std::to_string(c.max_ulp) + "] ULP";
  return FailedPrecondition(std::to_string(bad) + " of " + std::to_string(n) +
                            " elements differ (" + how + "); first at " +
                            FormatIndex(actual.shape(), first) + ": got " +
                            FormatElement(t, actual.raw() + first * w) + ", expected " +
                            FormatElement(t, expected.raw() + first * w));
}

// A numeric attribute (int or float), or `fallback` when absent.
double NumberOr(const ir::Operation& op, std::string_view key, double fallback) {
  ir::Attribute a = op.attr(key);
  if (a.kind() == ir::Attribute::Kind::kFloat) return a.float_value();
  if (a.kind() == ir::Attribute::Kind::kInt) return static_cast<double>(a.int_value());
  return fallback;
}

Criterion Tolerance(const ir::Operation& op, double fallback) {
  return {.mode = Criterion::kTolerance, .tolerance = NumberOr(op, "tolerance", fallback)};
}

Criterion Ulps(const ir::Operation& op) {
  return {.mode = Criterion::kUlp,
          .min_ulp = static_cast<uint64_t>(NumberOr(op, "min_ulp_difference", 0)),
          .max_ulp = static_cast<uint64_t>(NumberOr(op, "max_ulp_difference", 3))};
}

// --- The check dialect: two-operand and operand-vs-constant forms.

Status VerifyPair(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 2));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 0));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  if (op.operand(0).type() != op.operand(1).type()) {
    return InvalidArgument("'" + op.name_str() + "' compares " + op.operand(0).type().ToString() +
                           " with " + op.operand(1).type().ToString());
  }
  return Status::Ok();
}

Status VerifyConst(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 0));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  TPUSIM_ASSIGN_OR_RETURN(ir::Attribute value,
                          GetAttr(op, "value", ir::Attribute::Kind::kDenseElements));
  if (value.type() != op.operand(0).type()) {
    return InvalidArgument("'" + op.name_str() + "' compares " + op.operand(0).type().ToString() +
                           " with a constant of type " + value.type().ToString());
  }
  return Status::Ok();
}

template <Criterion (*kCriterion)(const ir::Operation&)>
StatusOr<std::vector<Tensor>> EvalPair(EvalContext&, const ir::Operation& op,
                                       std::span<const Tensor> operands) {
  TPUSIM_RETURN_IF_ERROR(Compare(operands[0], operands[1], kCriterion(op)));
  return std::vector<Tensor>{};
}

template <Criterion (*kCriterion)(const ir::Operation&)>
StatusOr<std::vector<Tensor>> EvalConst(EvalContext&, const ir::Operation& op,
                                        std::span<const Tensor> operands) {
  TPUSIM_ASSIGN_OR_RETURN(Tensor expected, Tensor::FromAttribute(op.attr("value")));
  TPUSIM_RETURN_IF_ERROR(Compare(operands[0], expected, kCriterion(op)));
  return std::vector<Tensor>{};
}

Criterion Exact(const ir::Operation&) { return {}; }
Criterion DialectTolerance(const ir::Operation& op) { return Tolerance(op, 1e-4); }

TPUSIM_REGISTER_OP({.name = "check.expect_eq",
                    .verify = VerifyPair,
                    .eval = EvalPair<Exact>,
                    .work = NoWork,
                    .side_effects = true});
TPUSIM_REGISTER_OP({.name = "check.expect_eq_const",
                    .verify = VerifyConst,
                    .eval = EvalConst<Exact>,
                    .work = NoWork,
                    .side_effects = true});
TPUSIM_REGISTER_OP({.name = "check.expect_almost_eq",
                    .verify = VerifyPair,
                    .eval = EvalPair<DialectTolerance>,
                    .work = NoWork,
                    .side_effects = true});
TPUSIM_REGISTER_OP({.name = "check.expect_almost_eq_const",
                    .verify = VerifyConst,
                    .eval = EvalConst<DialectTolerance>,
                    .work = NoWork,
                    .side_effects = true});
TPUSIM_REGISTER_OP({.name = "check.expect_close",
                    .verify = VerifyPair,
                    .eval = EvalPair<Ulps>,
                    .work = NoWork,
                    .side_effects = true});

// Upstream compares with a file that interpreter.probe wrote; tpusim writes
// no probe files, so this check cannot run (the check runner skips it).
Status VerifySerializedEq(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 1));
  return GetAttr(op, "probe_id", ir::Attribute::Kind::kString).status();
}

StatusOr<std::vector<Tensor>> EvalSerializedEq(EvalContext&, const ir::Operation&,
                                               std::span<const Tensor>) {
  return Unimplemented(
      "check.expect_serialized_eq needs the files interpreter.probe "
      "writes, which tpusim does not write");
}

TPUSIM_REGISTER_OP({.name = "check.expect_serialized_eq",
                    .verify = VerifySerializedEq,
                    .eval = EvalSerializedEq,
                    .work = NoWork,
                    .side_effects = true});

// --- The same checks as custom calls (@check.expect_*), as JAX's exported
// tests write them.

template <Criterion (*kCriterion)(const ir::Operation&)>
StatusOr<std::vector<Tensor>> EvalCheckCall(EvalContext&, const ir::Operation& op,
                                            std::span<const Tensor> operands) {
  TPUSIM_RETURN_IF_ERROR(
      Compare(operands[0], operands[1], kCriterion(op)).WithContext(CallTarget(op)));
  return std::vector<Tensor>{};
}

Criterion CallTolerance(const ir::Operation& op) { return Tolerance(op, 1e-3); }

TPUSIM_REGISTER_CUSTOM_CALL({.target = "check.expect_eq",
                             .verify = VerifyPair,
                             .eval = EvalCheckCall<Exact>,
                             .work = NoWork});
TPUSIM_REGISTER_CUSTOM_CALL({.target = "check.expect_almost_eq",
                             .verify = VerifyPair,
                             .eval = EvalCheckCall<CallTolerance>,
                             .work = NoWork});
TPUSIM_REGISTER_CUSTOM_CALL({.target = "check.expect_close",
                             .verify = VerifyPair,
                             .eval = EvalCheckCall<Ulps>,
                             .work = NoWork});

// --- The interpreter dialect's debugging ops.

Status VerifyProbe(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  return ExpectResultType(op, 0, op.operand(0).type());
}

// probe passes its operand through; tpusim keeps no probe files.
StatusOr<std::vector<Tensor>> EvalProbe(EvalContext&, const ir::Operation&,
                                        std::span<const Tensor> operands) {
  return std::vector<Tensor>{operands[0]};
}

TPUSIM_REGISTER_OP({.name = "interpreter.probe",
                    .verify = VerifyProbe,
                    .eval = EvalProbe,
                    .work = NoWork,
                    .side_effects = true});

Status VerifyPrint(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 1));
  return ExpectNumResults(op, 0);
}

// Prints whole values even when processes of a grid print at once.
StatusOr<std::vector<Tensor>> EvalPrint(EvalContext&, const ir::Operation&,
                                        std::span<const Tensor> operands) {
  static std::mutex mu;
  std::string text = operands[0].ToString(std::numeric_limits<int64_t>::max()) + "\n";
  std::lock_guard<std::mutex> lock(mu);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
  return std::vector<Tensor>{};
}

TPUSIM_REGISTER_OP({.name = "interpreter.print",
                    .verify = VerifyPrint,
                    .eval = EvalPrint,
                    .work = NoWork,
                    .side_effects = true});

}  // namespace
}  // namespace tpusim::ops

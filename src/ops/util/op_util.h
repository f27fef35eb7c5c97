// Helpers shared by the op definitions in src/ops/: operand/result checks for
// shape rules and small utilities for evaluation. Internal to src/ops.
#ifndef TPUSIM_OPS_UTIL_OP_UTIL_H_
#define TPUSIM_OPS_UTIL_OP_UTIL_H_

#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/ir/ir.h"
#include "tpusim/ops/op_def.h"
#include "tpusim/tensor/tensor.h"

namespace tpusim::ops {

// Shape-rule building blocks. Each returns kInvalidArgument with a message
// naming the op and what is wrong.
Status ExpectNumOperands(const ir::Operation& op, int n);
Status ExpectNumResults(const ir::Operation& op, int n);
Status ExpectNumRegions(const ir::Operation& op, int n);
// Every operand and result is a tensor (not a tuple or token).
Status ExpectAllTensors(const ir::Operation& op);
// Result i has exactly `type`.
Status ExpectResultType(const ir::Operation& op, int i, const ir::Type& type);
// A required attribute of the given kind.
StatusOr<ir::Attribute> GetAttr(const ir::Operation& op, std::string_view key,
                                ir::Attribute::Kind kind);
// A required integer-list attribute (array<i64>, [..], or dense<..>).
StatusOr<std::vector<int64_t>> GetInts(const ir::Operation& op, std::string_view key);
// An optional integer-list attribute: `fallback` when absent.
std::vector<int64_t> GetIntsOr(const ir::Operation& op, std::string_view key,
                               std::vector<int64_t> fallback);
// An optional integer attribute.
int64_t GetIntOr(const ir::Operation& op, std::string_view key, int64_t fallback);
// The value of an enum attribute (#stablehlo<comparison_direction EQ> -> "EQ"),
// or `fallback` when absent.
std::string GetEnumOr(const ir::Operation& op, std::string_view key,
                      std::string fallback);

// "dims [1, 0]" style formatting for messages.
std::string FormatInts(const std::vector<int64_t>& v);

// Allocates one result of each result type of `op`.
StatusOr<std::vector<Tensor>> AllocateResults(const ir::Operation& op);

// Whether `t`, given for an operand of `n` elements, stands for that operand
// filled with its one element (OpDef::splat_operands).
inline bool IsSplatPlaceholder(const Tensor& t, int64_t n) {
  return n != 1 && t.valid() && t.type().is_tensor() && t.num_elements() == 1;
}

// Storage for a result of `type` that an op writes element by element, each
// element after reading the operand elements at its position: the storage of
// the first of `owned[candidates...]` (operands from EvalContext::TakeOperands;
// positions past the end are skipped) that nothing else holds and whose
// element type and count are the result's, viewed with the result's shape;
// else new storage with unspecified contents. The op may go on reading the
// reused operand through `owned` until it returns.
StatusOr<Tensor> ReuseOrAllocate(std::span<const Tensor> owned,
                                 std::initializer_list<int> candidates, const ir::Type& type);

}  // namespace tpusim::ops

#endif  // TPUSIM_OPS_UTIL_OP_UTIL_H_

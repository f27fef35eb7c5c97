// The layout rule of every op, in one place: which layouts an op accepts for
// each operand and which it may give its results. Layout assignment
// (layout_assignment.cc) chooses layouts under these rules; VerifyLayouts
// checks them afterwards. Internal to src/compiler.
#ifndef TPUSIM_COMPILER_LAYOUT_RULES_H_
#define TPUSIM_COMPILER_LAYOUT_RULES_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/ir/ir.h"

namespace tpusim::compiler {

enum class LayoutRule {
  // Pointwise ops: every non-scalar operand in the result's layout, which is
  // the pass's to choose.
  kElementwise,
  // Operands in any layout, results the pass's to choose: broadcast_in_dim,
  // iota, constant, reduce, tpusim.copy.
  kProducer,
  // Operand in any layout; the result's is chosen, and when it is the
  // operand's permuted (TransposedLayout) the transpose is a free bitcast.
  kTranspose,
  // dot_general, dot, convolution: each operand's matrix dimensions (the
  // MXU loads either orientation) among its minor two; row-major results.
  kMatmul,
  // get_tuple_element: the element as its tuple holds it.
  kTupleElement,
  // Everything else (reshape, gather/scatter, slicing, control flow, calls,
  // collectives, custom_call, ...): row-major tensor operands and results.
  // Tuple operands pass as they are: a tuple is a table of buffers, each
  // laid out by its producer.
  kRowMajor,
};

LayoutRule RuleOf(const ir::Operation& op);

// What an operand needs of its layout. Rank 0 and 1 tensors have one layout
// and satisfy every need.
struct LayoutNeed {
  enum class Kind { kAny, kExact, kMinor };
  Kind kind = Kind::kAny;
  std::vector<int64_t> layout;  // kExact: minor_to_major (empty = row-major)
  std::vector<int64_t> dims;    // kMinor: dimensions to keep among the minor two
};

// What operand `i` of `op` needs; `fn` is the type of the function whose
// func.return `op` may be (its results' layouts are the interface).
LayoutNeed NeedOf(const ir::Operation& op, int i, const ir::FunctionType& fn);

bool Satisfies(const ir::Type& t, const LayoutNeed& need);

// The layout a copy of `t` takes to satisfy `need`: the exact one, or for
// kMinor row-major if that will do, else `dims` minor (the last most minor)
// and the others major in row-major order.
std::vector<int64_t> LayoutFor(const ir::Type& t, const LayoutNeed& need);

// `t` with every tensor, tuple elements included, row-major.
ir::Type RowMajor(const ir::Type& t);

// Checks what layout assignment guarantees: every operand satisfies NeedOf;
// results of kMatmul and kRowMajor ops and nested block arguments are
// row-major; get_tuple_element gives the element's layout; functions'
// arguments and returns match their types, row-major except for `entry`.
// A violation is kInternal (a compiler bug) naming the op and its location.
Status VerifyLayouts(const ir::Module& module, std::string_view entry);

}  // namespace tpusim::compiler

#endif  // TPUSIM_COMPILER_LAYOUT_RULES_H_

// The framework of jaxlib's linear algebra custom calls, shared by the CPU
// targets (lapack_calls.cc) and the GPU ones (gpu_solver_calls.cc,
// gpu_legacy_solver_calls.cc): a Family is one routine's signature,
// evaluation and work, registered under each target name that calls it.
// The routines CPU and GPU targets call alike are defined here once, their
// attributes read by the target (OptionsFn). Internal to src/ops.
#ifndef TPUSIM_OPS_CUSTOM_CALLS_LINALG_LINALG_FAMILY_H_
#define TPUSIM_OPS_CUSTOM_CALLS_LINALG_LINALG_FAMILY_H_

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ops/kernels/lapack_glue.h"
#include "tpusim/ops/custom_call.h"

namespace tpusim::ops::linalg {

// What a target takes and gives for the op's operands and attributes.
struct Signature {
  std::vector<ir::Type> operands, results;
};
using SignatureFn = std::function<StatusOr<Signature>(const ir::Operation&)>;

struct Family {
  int operands = 1;
  int trailing_optional = 0;   // operands after `operands` a call may leave out
  int matrix = 0;              // the operand holding the matrices
  bool tuple_results = false;  // the results may also come as one tuple (older exports)
  SignatureFn signature;
  // Fills `out` (allocated, zeroed, flat) from `in` for the element type.
  std::function<Status(ir::ElementType, const ir::Operation&, std::span<const Tensor>,
                       std::vector<Tensor>&)>
      eval;
  WorkFn work;
};

// `target` running `f` when operand 0 holds `element`, or any of f32, f64,
// c64 and c128 when nullopt (the GPU targets take all four). A call that
// fails the signature is priced by its traffic alone.
CustomCallDef FamilyDef(std::string target, const Family& f,
                        std::optional<ir::ElementType> element = std::nullopt);
bool RegisterFamily(std::string target, const Family& f,
                    std::optional<ir::ElementType> element = std::nullopt);

// A Family::eval whose body (statements returning Status) runs with T the
// scalar type of the element type, `op`, `in` and `out` in scope; the
// _CAPTURING form captures `capture` (a Family's OptionsFn).
#define TPUSIM_LAPACK_EVAL_CAPTURING(capture, ...)                                  \
  [capture](ir::ElementType e, const ir::Operation& op, std::span<const Tensor> in, \
            std::vector<Tensor>& out) -> Status {                                   \
    return la::Dispatch(e, [&](auto tag) -> Status {                                \
      using T = decltype(tag);                                                      \
      __VA_ARGS__                                                                   \
    });                                                                             \
  }
#define TPUSIM_LAPACK_EVAL(...) TPUSIM_LAPACK_EVAL_CAPTURING(, __VA_ARGS__)

// ---- helpers for signatures, evaluations and pricing

void CopyInto(const Tensor& from, Tensor& to);
ir::ElementType RealOf(ir::ElementType e);
const ir::Type& Operand(const ir::Operation& op, int i);
Work PricedAs(Work w, std::string what);
// Operand i as a batch of matrices. REQUIRES: it has rank >= 2.
la::Batch MatrixBatch(const ir::Operation& op, int i = 0);
// The i32 status per matrix of operand 0: its batch dimensions.
ir::Type Info(const ir::Operation& op);
// A vector of n elements of `e` per matrix of operand 0.
ir::Type Vector(const ir::Operation& op, ir::ElementType e, int64_t n);
// Operand 0 (square matrices) in, itself and `extra` out.
StatusOr<Signature> SquareSignature(const ir::Operation& op, std::vector<ir::Type> extra);

// ---- results that may come as one tuple

// The op's results, or the elements of its single tuple result.
std::vector<ir::Type> FlatResultTypes(const ir::Operation& op);
bool HasTupleResult(const ir::Operation& op);
// Allocates the flat results.
StatusOr<std::vector<Tensor>> AllocateFlat(const ir::Operation& op);
// The results in the op's form.
std::vector<Tensor> InOpForm(const ir::Operation& op, std::vector<Tensor> flat);

// ---- routines the CPU and GPU targets call alike

// What a target's attributes ask of its routine: the triangle read and
// whether eigenvectors are wanted. CPU targets spell them as ui8
// characters, GPU targets as bools.
struct Options {
  char uplo = 'L', jobz = 'V';
};
using OptionsFn = std::function<StatusOr<Options>(const ir::Operation&)>;

// a [..., m, n] -> lu, pivots [..., k] i32 (1-based), info.
Family GetrfFamily();
// a [..., m, n] -> packed QR, taus [..., k].
Family GeqrfFamily();
// a [..., m, n], taus [..., k] (m >= n >= k) -> Q [..., m, n].
Family OrgqrFamily();
// a [..., n, n] -> the factor in the uplo triangle (the other as given), info.
Family PotrfFamily(OptionsFn options);
// a [..., n, n] -> eigenvectors (columns), eigenvalues [..., n] ascending, info.
Family SyevdFamily(OptionsFn options);
// a [..., n, n] -> packed reflectors, d [..., n], e and taus [..., n - 1], info.
Family SytrdFamily(OptionsFn options);

// The results of EvalSvd, in the target's slots.
struct SvdSlots {
  Tensor& a;  // gets the input, destroyed
  Tensor& s;
  Tensor& u;
  Tensor& vt;
  Tensor& info;
};
// The SVD of each matrix of a [..., m, n] by LAPACK gesvd (QR iteration)
// or gesdd (divide and conquer; needs jobu == jobvt): s [..., k]
// descending, u [..., m, m or k] and vt [..., n or k, n] as `jobu` and
// `jobvt` ask ('A', 'S', or 'N': left untouched), info.
Status EvalSvd(bool gesvd, char jobu, char jobvt, const Tensor& a, SvdSlots out);

}  // namespace tpusim::ops::linalg

#endif  // TPUSIM_OPS_CUSTOM_CALLS_LINALG_LINALG_FAMILY_H_

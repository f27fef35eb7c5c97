// Index machinery shared by the data-movement, indexing and reduction ops:
// row-major index iteration, strided element copies that move bytes in typed
// chunks (never decoding elements), integer index operands, and the dimension
// list checks of their shape rules. Internal to src/ops.
#ifndef TPUSIM_OPS_UTIL_INDEX_UTIL_H_
#define TPUSIM_OPS_UTIL_INDEX_UTIL_H_

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/ir/ir.h"
#include "tpusim/tensor/tensor.h"

namespace tpusim::ops {

// A 16-byte element (complex<f64>), copied as two words.
struct Bytes16 {
  uint64_t lo, hi;
};

// Calls fn.template operator()<T>() with T a trivially copyable type of
// `width` bytes (1, 2, 4, 8 or 16), so that loops over elements of any
// element type can move them as typed values. REQUIRES: a valid width.
template <typename Fn>
decltype(auto) DispatchByWidth(int width, Fn&& fn) {
  switch (width) {
    case 1: return fn.template operator()<uint8_t>();
    case 2: return fn.template operator()<uint16_t>();
    case 4: return fn.template operator()<uint32_t>();
    case 8: return fn.template operator()<uint64_t>();
    default: return fn.template operator()<Bytes16>();
  }
}

// Advances `index` to the next index of `shape` in row-major order; returns
// false (leaving `index` all zeros) after the last one.
inline bool NextIndex(std::span<int64_t> index, std::span<const int64_t> shape) {
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    if (++index[d] < shape[d]) return true;
    index[d] = 0;
  }
  return false;
}

// Row-major flat position of `index` given `strides`.
inline int64_t FlatOffset(std::span<const int64_t> index, std::span<const int64_t> strides) {
  int64_t off = 0;
  for (size_t d = 0; d < index.size(); ++d) off += index[d] * strides[d];
  return off;
}

// Copies the elements of an index space between two strided layouts:
// dst[sum(i * dst_strides)] = src[sum(i * src_strides)] for every i in
// `shape`. Strides are in elements and may be zero (broadcast) or negative
// (reverse). Planned once (size-1 dimensions dropped, contiguous runs merged)
// and run many times, e.g. once per gathered slice; a large copy runs on the
// host's cores. Thread-compatible.
class StridedCopier {
 public:
  StridedCopier(int element_bytes, std::span<const int64_t> shape,
                std::span<const int64_t> src_strides, std::span<const int64_t> dst_strides);

  // `src` and `dst` point to the element at index 0 of each layout.
  void Run(const uint8_t* src, uint8_t* dst) const { run_(*this, src, dst); }
  int64_t num_elements() const { return num_elements_; }

 private:
  template <typename T>
  static void RunTyped(const StridedCopier& c, const uint8_t* src, uint8_t* dst);

  int width_;
  int64_t num_elements_ = 1;
  std::vector<int64_t> shape_;
  std::vector<int64_t> src_bytes_;  // strides in bytes
  std::vector<int64_t> dst_bytes_;
  void (*run_)(const StridedCopier&, const uint8_t*, uint8_t*);
};

// Calls fn(src_offset, dst_offset) for every index of `shape` in row-major
// order, with offsets (in elements) kept incrementally from the two stride
// lists. For typed loops that combine rather than copy elements.
template <typename Fn>
void ForEachStrided(std::span<const int64_t> shape, std::span<const int64_t> src_strides,
                    std::span<const int64_t> dst_strides, Fn&& fn) {
  const size_t rank = shape.size();
  for (int64_t d : shape) {
    if (d == 0) return;
  }
  if (rank == 0) {
    fn(int64_t{0}, int64_t{0});
    return;
  }
  std::vector<int64_t> index(rank, 0);
  const int64_t inner = shape[rank - 1];
  const int64_t s_in = src_strides[rank - 1], d_in = dst_strides[rank - 1];
  int64_t s = 0, t = 0;
  while (true) {
    for (int64_t i = 0; i < inner; ++i) fn(s + i * s_in, t + i * d_in);
    size_t d = rank - 1;
    while (d-- > 0) {
      s += src_strides[d];
      t += dst_strides[d];
      if (++index[d] < shape[d]) break;
      s -= src_strides[d] * shape[d];
      t -= dst_strides[d] * shape[d];
      index[d] = 0;
    }
    if (d == static_cast<size_t>(-1)) return;
  }
}

// Fills every element of `t` with the single element of `scalar`.
// REQUIRES: same element type; `t` is being built.
void FillWithScalar(Tensor& t, const Tensor& scalar);
// Fills every element of `t` with the element whose storage bytes are at
// `element`. REQUIRES: `t` is being built.
void FillWithElement(Tensor& t, const uint8_t* element);

// A tensor with `t`'s type and contents that the caller may write: `t`'s own
// storage when nothing else holds it (an operand taken with
// EvalContext::TakeOperands at its last use; `t` is then left empty), else
// a copy made on the host's cores.
StatusOr<Tensor> WritableCopy(Tensor& t);

// Copies `bytes` bytes from `src` to `dst` on the host's cores when large.
// REQUIRES: the ranges do not overlap.
void ParallelCopy(uint8_t* dst, const uint8_t* src, int64_t bytes);

// A 0-d tensor holding element `flat` of `t`.
StatusOr<Tensor> ScalarAt(const Tensor& t, int64_t flat);

// The values of an integer (or bool) tensor, in row-major order. ui64 values
// past INT64_MAX saturate, which keeps them out of bounds for clamping.
std::vector<int64_t> IndexValues(const Tensor& t);

// Shape-rule checks on dimension lists; errors name `op` and `what`.
// Each entry is in [0, rank).
Status CheckDimsInRange(const ir::Operation& op, std::string_view what,
                        const std::vector<int64_t>& dims, int64_t rank);
// No entry repeats.
Status CheckUnique(const ir::Operation& op, std::string_view what,
                   const std::vector<int64_t>& dims);
// Entries are in ascending order.
Status CheckSorted(const ir::Operation& op, std::string_view what,
                   const std::vector<int64_t>& dims);
// `values` has exactly `n` entries.
Status CheckSize(const ir::Operation& op, std::string_view what,
                 const std::vector<int64_t>& values, int64_t n);
// `type` is a tensor of element type `expected`; `what` names it in errors.
Status CheckSameElement(const ir::Operation& op, std::string_view what,
                        const ir::Type& type, ir::ElementType expected);

// A kInvalidArgument naming `op`.
Status OpError(const ir::Operation& op, const std::string& what);

// The operands of a variadic reduction (reduce, reduce_window): n inputs of
// one shape, then n 0-d init values of the inputs' element types. Returns n.
StatusOr<int> CheckInputsAndInits(const ir::Operation& op);

// Checks that `region` has one block taking 0-d tensors of `arg_elements`
// and returning 0-d tensors of `result_elements` (for reduce-like bodies).
Status CheckScalarRegion(const ir::Operation& op, const ir::Region& region,
                         std::string_view what,
                         const std::vector<ir::ElementType>& arg_elements,
                         const std::vector<ir::ElementType>& result_elements);

// Checks that `region` has one block with argument types `args` ending in a
// stablehlo.return of `results`.
Status CheckRegionSignature(const ir::Operation& op, const ir::Region& region,
                            std::string_view what, const std::vector<ir::Type>& args,
                            const std::vector<ir::Type>& results);

}  // namespace tpusim::ops

#endif  // TPUSIM_OPS_UTIL_INDEX_UTIL_H_

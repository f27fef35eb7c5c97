#include "ops/util/index_util.h"

#include <algorithm>
#include <array>
#include <limits>

#include "ops/util/op_util.h"
#include "ops/util/parallel.h"

namespace tpusim::ops {

StridedCopier::StridedCopier(int element_bytes, std::span<const int64_t> shape,
                             std::span<const int64_t> src_strides,
                             std::span<const int64_t> dst_strides)
    : width_(element_bytes) {
  for (size_t d = 0; d < shape.size(); ++d) {
    num_elements_ *= shape[d];
    if (shape[d] == 1) continue;  // contributes nothing to any offset
    // Merge with the previous (outer) dimension when both layouts continue
    // it contiguously: [.., a, b] with outer stride = b * inner stride.
    if (!shape_.empty() && src_bytes_.back() == src_strides[d] * width_ * shape[d] &&
        dst_bytes_.back() == dst_strides[d] * width_ * shape[d]) {
      shape_.back() *= shape[d];
      src_bytes_.back() = src_strides[d] * width_;
      dst_bytes_.back() = dst_strides[d] * width_;
      continue;
    }
    shape_.push_back(shape[d]);
    src_bytes_.push_back(src_strides[d] * width_);
    dst_bytes_.push_back(dst_strides[d] * width_);
  }
  run_ = DispatchByWidth(width_, []<typename T>() { return &StridedCopier::RunTyped<T>; });
}

namespace {

// Copies `n` elements of type T from src (stride ss bytes) to dst (stride
// ds bytes).
template <typename T>
void CopyRun(const uint8_t* src, uint8_t* dst, int64_t n, int64_t ss, int64_t ds) {
  constexpr int64_t w = sizeof(T);
  if (ss == w && ds == w) {
    std::memcpy(dst, src, n * w);
    return;
  }
  T v;
  if (ss == 0) {  // a broadcast: one value along the run
    std::memcpy(&v, src, w);
    for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * ds, &v, w);
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(&v, src + i * ss, w);
    std::memcpy(dst + i * ds, &v, w);
  }
}

// Copies go parallel from this many bytes.
constexpr int64_t kParallelCopyBytes = int64_t{1} << 18;

// A transpose moves square tiles of this many elements a side, whose source
// and destination lines both stay in the L1 cache.
constexpr int64_t kTile = 32;

// The copy in tiles over two dimensions: `k`, along which the source is
// contiguous, and the innermost, along which the destination is. Threads take
// tiles' rows: ranges of (position in the other dimensions, block of k).
template <typename T>
void CopyTiled(std::span<const int64_t> shape, std::span<const int64_t> src_bytes,
               std::span<const int64_t> dst_bytes, size_t k, const uint8_t* src, uint8_t* dst) {
  constexpr int64_t w = sizeof(T);
  const size_t inner = shape.size() - 1;
  const int64_t nk = shape[k], ni = shape[inner];
  const int64_t sk = src_bytes[k], dk = dst_bytes[k];
  const int64_t si = src_bytes[inner], di = dst_bytes[inner];
  const int64_t k_blocks = (nk + kTile - 1) / kTile;
  int64_t others = 1;
  for (size_t d = 0; d < inner; ++d) others *= d == k ? 1 : shape[d];
  ParallelFor(others * k_blocks, std::max<int64_t>(1, kParallelCopyBytes / (kTile * ni * w)),
              [&](int64_t begin, int64_t end) {
                for (int64_t item = begin; item < end; ++item) {
                  int64_t rest = item / k_blocks, s = 0, t = 0;
                  for (size_t d = inner; d-- > 0;) {
                    if (d == k) continue;
                    const int64_t i = rest % shape[d];
                    rest /= shape[d];
                    s += i * src_bytes[d];
                    t += i * dst_bytes[d];
                  }
                  const int64_t k0 = item % k_blocks * kTile, k1 = std::min(nk, k0 + kTile);
                  for (int64_t i0 = 0; i0 < ni; i0 += kTile) {
                    const int64_t i1 = std::min(ni, i0 + kTile);
                    for (int64_t kk = k0; kk < k1; ++kk) {
                      const uint8_t* from = src + s + kk * sk;
                      uint8_t* to = dst + t + kk * dk;
                      for (int64_t i = i0; i < i1; ++i) {
                        T v;
                        std::memcpy(&v, from + i * si, w);
                        std::memcpy(to + i * di, &v, w);
                      }
                    }
                  }
                }
              });
}

// The dimension a tiled copy pairs with the innermost one: an outer one along
// which the source is contiguous while it is not along the innermost one (a
// transpose), both long enough to fill tiles; -1 if none.
int TileDimension(std::span<const int64_t> shape, std::span<const int64_t> src_bytes,
                  std::span<const int64_t> dst_bytes, int64_t w) {
  const size_t inner = shape.size() - 1;
  if (shape.size() < 2 || dst_bytes[inner] != w || src_bytes[inner] == w || src_bytes[inner] == 0 ||
      shape[inner] < kTile) {
    return -1;
  }
  for (size_t d = 0; d < inner; ++d) {
    if (src_bytes[d] == w && shape[d] >= kTile) return static_cast<int>(d);
  }
  return -1;
}

}  // namespace

template <typename T>
void StridedCopier::RunTyped(const StridedCopier& c, const uint8_t* src, uint8_t* dst) {
  if (c.num_elements_ == 0) return;
  if (c.shape_.empty()) {
    std::memcpy(dst, src, sizeof(T));
    return;
  }
  const size_t inner_dim = c.shape_.size() - 1;
  const int64_t inner = c.shape_[inner_dim];
  const int64_t ss = c.src_bytes_[inner_dim], ds = c.dst_bytes_[inner_dim];
  const int64_t grain = std::max<int64_t>(1, kParallelCopyBytes / sizeof(T));
  if (const int k = TileDimension(c.shape_, c.src_bytes_, c.dst_bytes_, sizeof(T)); k >= 0) {
    CopyTiled<T>(c.shape_, c.src_bytes_, c.dst_bytes_, k, src, dst);
    return;
  }
  if (inner_dim == 0) {
    // One run: split it.
    ParallelFor(inner, grain, [&](int64_t b, int64_t e) {
      CopyRun<T>(src + b * ss, dst + b * ds, e - b, ss, ds);
    });
    return;
  }
  // Rows of the inner dimension, split among threads; each thread walks the
  // outer index of its first row onwards.
  const int64_t rows = c.num_elements_ / inner;
  ParallelFor(rows, std::max<int64_t>(1, grain / inner), [&](int64_t b, int64_t e) {
    std::array<int64_t, 12> small{};
    std::vector<int64_t> large;
    if (inner_dim > small.size()) large.resize(inner_dim);
    int64_t* index = inner_dim > small.size() ? large.data() : small.data();
    int64_t s = 0, t = 0, rest = b;
    for (size_t d = inner_dim; d-- > 0;) {
      index[d] = rest % c.shape_[d];
      rest /= c.shape_[d];
      s += index[d] * c.src_bytes_[d];
      t += index[d] * c.dst_bytes_[d];
    }
    for (int64_t r = b; r < e; ++r) {
      CopyRun<T>(src + s, dst + t, inner, ss, ds);
      for (size_t d = inner_dim; d-- > 0;) {
        s += c.src_bytes_[d];
        t += c.dst_bytes_[d];
        if (++index[d] < c.shape_[d]) break;
        s -= c.src_bytes_[d] * c.shape_[d];
        t -= c.dst_bytes_[d] * c.shape_[d];
        index[d] = 0;
      }
    }
  });
}

void FillWithScalar(Tensor& t, const Tensor& scalar) { FillWithElement(t, scalar.raw()); }

void FillWithElement(Tensor& t, const uint8_t* element) {
  const int64_t n = t.num_elements();
  DispatchByWidth(ir::StorageBytes(t.element()), [&]<typename T>() {
    T v;
    std::memcpy(&v, element, sizeof(T));
    T* out = t.mutable_data<T>();
    ParallelFor(n, kParallelCopyBytes / sizeof(T),
                [&](int64_t b, int64_t e) { std::fill(out + b, out + e, v); });
  });
}

StatusOr<Tensor> WritableCopy(Tensor& t) {
  if (!t.type().is_tensor() || t.unique_storage()) return std::move(t);
  TPUSIM_ASSIGN_OR_RETURN(Tensor copy, Tensor::AllocateUninitialized(t.type()));
  ParallelCopy(copy.mutable_raw(), t.raw(), t.size_bytes());
  return copy;
}

void ParallelCopy(uint8_t* dst, const uint8_t* src, int64_t bytes) {
  ParallelFor(
      bytes, kParallelCopyBytes,
      [&](int64_t b, int64_t e) { std::memcpy(dst + b, src + b, e - b); }, 64);
}

StatusOr<Tensor> ScalarAt(const Tensor& t, int64_t flat) {
  TPUSIM_ASSIGN_OR_RETURN(Tensor s, Tensor::Allocate(ir::Type::Tensor(t.element(), {})));
  const int w = ir::StorageBytes(t.element());
  std::memcpy(s.mutable_raw(), t.raw() + flat * w, w);
  return s;
}

namespace {

template <typename T>
void AppendValues(const Tensor& t, std::vector<int64_t>& out) {
  const T* p = t.data<T>();
  for (int64_t i = 0, n = t.num_elements(); i < n; ++i) {
    if constexpr (std::is_same_v<T, uint64_t>) {
      out.push_back(p[i] > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
                        ? std::numeric_limits<int64_t>::max()
                        : static_cast<int64_t>(p[i]));
    } else {
      out.push_back(static_cast<int64_t>(p[i]));
    }
  }
}

}  // namespace

std::vector<int64_t> IndexValues(const Tensor& t) {
  std::vector<int64_t> out;
  out.reserve(t.num_elements());
  const ir::ElementType e = t.element();
  const bool is_unsigned = ir::IsUnsignedInt(e) || ir::IsBool(e);
  switch (ir::StorageBytes(e)) {
    case 1: is_unsigned ? AppendValues<uint8_t>(t, out) : AppendValues<int8_t>(t, out); break;
    case 2: is_unsigned ? AppendValues<uint16_t>(t, out) : AppendValues<int16_t>(t, out); break;
    case 4: is_unsigned ? AppendValues<uint32_t>(t, out) : AppendValues<int32_t>(t, out); break;
    default: is_unsigned ? AppendValues<uint64_t>(t, out) : AppendValues<int64_t>(t, out); break;
  }
  return out;
}

Status OpError(const ir::Operation& op, const std::string& what) {
  return InvalidArgument("'" + op.name_str() + "' " + what);
}

Status CheckDimsInRange(const ir::Operation& op, std::string_view what,
                        const std::vector<int64_t>& dims, int64_t rank) {
  for (int64_t d : dims) {
    if (d < 0 || d >= rank) {
      return OpError(op, std::string(what) + " " + FormatInts(dims) +
                             " must be in [0, " + std::to_string(rank) + ")");
    }
  }
  return Status::Ok();
}

Status CheckUnique(const ir::Operation& op, std::string_view what,
                   const std::vector<int64_t>& dims) {
  std::vector<int64_t> sorted = dims;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    return OpError(op, std::string(what) + " " + FormatInts(dims) + " has repeated entries");
  }
  return Status::Ok();
}

Status CheckSorted(const ir::Operation& op, std::string_view what,
                   const std::vector<int64_t>& dims) {
  if (!std::is_sorted(dims.begin(), dims.end())) {
    return OpError(op, std::string(what) + " " + FormatInts(dims) + " must be sorted");
  }
  return Status::Ok();
}

Status CheckSize(const ir::Operation& op, std::string_view what,
                 const std::vector<int64_t>& values, int64_t n) {
  if (static_cast<int64_t>(values.size()) != n) {
    return OpError(op, std::string(what) + " " + FormatInts(values) + " must have " +
                           std::to_string(n) + " entries");
  }
  return Status::Ok();
}

Status CheckSameElement(const ir::Operation& op, std::string_view what,
                        const ir::Type& type, ir::ElementType expected) {
  if (!type.is_tensor() || type.element() != expected) {
    return OpError(op, std::string(what) + " has type " + type.ToString() +
                           ", expected element type " +
                           std::string(ir::ElementTypeName(expected)));
  }
  return Status::Ok();
}

Status CheckScalarRegion(const ir::Operation& op, const ir::Region& region,
                         std::string_view what,
                         const std::vector<ir::ElementType>& arg_elements,
                         const std::vector<ir::ElementType>& result_elements) {
  auto scalar_types = [](const std::vector<ir::ElementType>& es) {
    std::vector<ir::Type> ts;
    for (ir::ElementType e : es) ts.push_back(ir::Type::Tensor(e, {}));
    return ts;
  };
  return CheckRegionSignature(op, region, what, scalar_types(arg_elements),
                              scalar_types(result_elements));
}

Status CheckRegionSignature(const ir::Operation& op, const ir::Region& region,
                            std::string_view what, const std::vector<ir::Type>& args,
                            const std::vector<ir::Type>& results) {
  auto list = [](const std::vector<ir::Type>& ts) {
    std::string s = "(";
    for (size_t i = 0; i < ts.size(); ++i) s += (i ? ", " : "") + ts[i].ToString();
    return s + ")";
  };
  if (region.num_blocks() != 1) {
    return OpError(op, std::string(what) + " must have exactly one block");
  }
  const ir::Block& block = region.front();
  std::vector<ir::Type> got_args;
  for (ir::Value v : block.arguments()) got_args.push_back(v.type());
  const ir::Operation* ret = block.terminator();
  if (ret == nullptr || ret->name_str() != "stablehlo.return") {
    return OpError(op, std::string(what) + " must end in stablehlo.return");
  }
  std::vector<ir::Type> got_results;
  for (ir::Value v : ret->operands()) got_results.push_back(v.type());
  if (got_args != args || got_results != results) {
    return OpError(op, std::string(what) + " has type " + list(got_args) + " -> " +
                           list(got_results) + ", expected " + list(args) + " -> " +
                           list(results));
  }
  return Status::Ok();
}

StatusOr<int> CheckInputsAndInits(const ir::Operation& op) {
  const int n = op.num_operands() / 2;
  if (n == 0 || op.num_operands() % 2 != 0) {
    return OpError(op, "needs inputs and as many init values");
  }
  const ir::Type& first = op.operand(0).type();
  for (int i = 0; i < n; ++i) {
    const ir::Type& input = op.operand(i).type();
    const ir::Type& init = op.operand(n + i).type();
    if (input.shape() != first.shape()) {
      return OpError(op, "inputs have different shapes: " + first.ToString() + " and " +
                             input.ToString());
    }
    if (init.rank() != 0 || init.element() != input.element()) {
      return OpError(op, "init value " + std::to_string(i) + " must be a 0-d tensor of " +
                             std::string(ir::ElementTypeName(input.element())));
    }
  }
  return n;
}

}  // namespace tpusim::ops

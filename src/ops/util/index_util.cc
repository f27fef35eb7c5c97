#include "ops/util/index_util.h"

#include <algorithm>
#include <limits>

#include "ops/util/op_util.h"

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

template <typename T>
void StridedCopier::RunTyped(const StridedCopier& c, const uint8_t* src, uint8_t* dst) {
  if (c.num_elements_ == 0) return;
  if (c.shape_.empty()) {
    std::memcpy(dst, src, sizeof(T));
    return;
  }
  c.CopyDim<T>(0, src, dst);
}

template <typename T>
void StridedCopier::CopyDim(size_t d, const uint8_t* src, uint8_t* dst) const {
  const int64_t n = shape_[d];
  const int64_t ss = src_bytes_[d], ds = dst_bytes_[d];
  if (d + 1 < shape_.size()) {
    for (int64_t i = 0; i < n; ++i) CopyDim<T>(d + 1, src + i * ss, dst + i * ds);
    return;
  }
  if (ss == static_cast<int64_t>(sizeof(T)) && ds == static_cast<int64_t>(sizeof(T))) {
    std::memcpy(dst, src, n * sizeof(T));
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, src + i * ss, sizeof(T));
    std::memcpy(dst + i * ds, &v, sizeof(T));
  }
}

void FillWithScalar(Tensor& t, const Tensor& scalar) {
  const int64_t n = t.num_elements();
  DispatchByWidth(ir::StorageBytes(t.element()), [&]<typename T>() {
    T v;
    std::memcpy(&v, scalar.raw(), sizeof(T));
    T* out = t.mutable_data<T>();
    std::fill(out, out + n, v);
  });
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
  for (int64_t i = 0; i < t.num_elements(); ++i) {
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

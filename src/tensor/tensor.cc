#include "tpusim/tensor/tensor.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>

#include "tensor/page_pool.h"
#include "tpusim/numerics/float_formats.h"

namespace tpusim {
namespace {

int64_t DefaultLimit() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return int64_t{8} << 30;
  return static_cast<int64_t>(static_cast<double>(pages) * page * 0.8);
}

std::atomic<int64_t>& Limit() {
  static std::atomic<int64_t> limit{DefaultLimit()};
  return limit;
}

std::atomic<int64_t>& InUse() {
  static std::atomic<int64_t> in_use{0};
  return in_use;
}

std::string Gib(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / (1 << 30));
  return buf;
}

// Counts `bytes` against the host memory limit, or says why it cannot.
Status Reserve(const ir::Type& type, int64_t bytes) {
  int64_t total = InUse().fetch_add(bytes) + bytes;
  if (total > Limit()) {
    InUse() -= bytes;
    return ResourceExhausted(type.ToString() + " needs " + Gib(bytes) +
                             ", past the host memory limit of " + Gib(Limit()) +
                             " (" + Gib(total - bytes) + " already in use)");
  }
  return Status::Ok();
}

}  // namespace

void SetHostMemoryLimit(int64_t bytes) { Limit() = bytes; }
int64_t HostMemoryLimit() { return Limit(); }
int64_t HostMemoryInUse() { return InUse(); }

StatusOr<int64_t> CheckedByteSize(const ir::Shape& shape, int64_t element_bytes) {
  int64_t n = element_bytes;
  for (int64_t d : shape) {
    if (d < 0) return InvalidArgument("negative dimension " + std::to_string(d));
    if (d != 0 && n > INT64_MAX / d) {
      return ResourceExhausted("tensor size overflows 64 bits");
    }
    n *= d;
  }
  return n;
}

Tensor::Buffer::~Buffer() {
  if (release) {
    release();
  } else {
    std::free(data);
  }
  InUse() -= bytes;
}

StatusOr<Tensor> Tensor::Allocate(const ir::Type& type) {
  TPUSIM_ASSIGN_OR_RETURN(Tensor t, AllocateUninitialized(type));
  if (!t.buffer_->zeroed) std::memset(t.mutable_raw(), 0, static_cast<size_t>(t.size_bytes_));
  return t;
}

StatusOr<Tensor> Tensor::AllocateUninitialized(const ir::Type& type) {
  TPUSIM_ASSIGN_OR_RETURN(int64_t bytes,
                          CheckedByteSize(type.shape(), ir::StorageBytes(type.element())));
  TPUSIM_RETURN_IF_ERROR(Reserve(type, bytes));
  auto buffer = std::make_shared<Buffer>();
  buffer->bytes = bytes;
  if (bytes >= tensor_internal::kPooledFrom) {
    tensor_internal::Pages pages = tensor_internal::TakePages(bytes);
    buffer->data = pages.data;
    buffer->zeroed = pages.zeroed;
    if (pages.data != nullptr) {
      buffer->release = [pages] { tensor_internal::GivePages(pages.data, pages.length); };
    }
  } else {
    // Round up: aligned_alloc wants a multiple of the alignment.
    size_t alloc = static_cast<size_t>((bytes + 63) / 64 * 64);
    buffer->data = static_cast<uint8_t*>(std::aligned_alloc(64, alloc == 0 ? 64 : alloc));
  }
  if (buffer->data == nullptr) {
    return ResourceExhausted(type.ToString() + ": host allocation of " + Gib(bytes) + " failed");
  }
  Tensor t;
  t.valid_ = true;
  t.type_ = type.WithDefaultLayout();
  t.size_bytes_ = bytes;
  t.buffer_ = std::move(buffer);
  return t;
}

StatusOr<Tensor> Tensor::Adopt(const ir::Type& type, uint8_t* data,
                               std::function<void()> release) {
  StatusOr<int64_t> bytes = CheckedByteSize(type.shape(), ir::StorageBytes(type.element()));
  Status st = bytes.ok() ? Status::Ok() : bytes.status();
  if (st.ok() && reinterpret_cast<uintptr_t>(data) % 64 != 0) {
    st = InvalidArgument(type.ToString() + ": adopted storage is not 64-byte aligned");
  }
  if (st.ok()) st = Reserve(type, *bytes);
  if (!st.ok()) {
    if (release) release();
    return st;
  }
  auto buffer = std::make_shared<Buffer>();
  buffer->bytes = *bytes;
  buffer->data = data;
  buffer->release = std::move(release);
  buffer->adopted = true;
  Tensor t;
  t.valid_ = true;
  t.type_ = type.WithDefaultLayout();
  t.size_bytes_ = *bytes;
  t.buffer_ = std::move(buffer);
  return t;
}

StatusOr<Tensor> Tensor::FromAttribute(const ir::Attribute& dense) {
  if (dense.kind() != ir::Attribute::Kind::kDenseElements) {
    return InvalidArgument("expected a dense elements attribute, got " + dense.ToString());
  }
  TPUSIM_ASSIGN_OR_RETURN(Tensor t, Allocate(dense.type()));
  const auto& bytes = dense.bytes();
  if (dense.is_splat()) {
    int w = ir::StorageBytes(t.element());
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      std::memcpy(t.mutable_raw() + i * w, bytes.data(), w);
    }
  } else if (!bytes.empty()) {
    std::memcpy(t.mutable_raw(), bytes.data(), bytes.size());
  }
  return t;
}

Tensor Tensor::Tuple(std::vector<Tensor> elements) {
  Tensor t;
  t.valid_ = true;
  std::vector<ir::Type> types;
  for (const Tensor& e : elements) types.push_back(e.type());
  t.type_ = ir::Type::Tuple(std::move(types));
  t.tuple_ = std::move(elements);
  return t;
}

Tensor Tensor::Token() {
  Tensor t;
  t.valid_ = true;
  t.type_ = ir::Type::Token();
  return t;
}

StatusOr<Tensor> Tensor::Clone() const {
  if (!type_.is_tensor()) return *this;
  TPUSIM_ASSIGN_OR_RETURN(Tensor t, Allocate(type_));
  if (size_bytes_ > 0) std::memcpy(t.mutable_raw(), raw(), size_bytes_);
  return t;
}

Tensor Tensor::Reshaped(const ir::Shape& shape) const {
  Tensor t = *this;
  t.type_ = ir::Type::Tensor(element(), shape);
  return t;
}

bool Tensor::BitwiseEquals(const Tensor& other) const {
  if (type_ != other.type_) return false;
  if (type_.is_tuple()) {
    for (size_t i = 0; i < tuple_.size(); ++i) {
      if (!tuple_[i].BitwiseEquals(other.tuple_[i])) return false;
    }
    return true;
  }
  if (!type_.is_tensor()) return true;
  return size_bytes_ == 0 || std::memcmp(raw(), other.raw(), size_bytes_) == 0;
}

std::string Tensor::ToString(int64_t max_elements) const {
  if (!valid_) return "<empty>";
  if (type_.is_token()) return "token";
  if (type_.is_tuple()) {
    std::string s = "(";
    for (size_t i = 0; i < tuple_.size(); ++i) {
      if (i) s += ", ";
      s += tuple_[i].ToString(max_elements);
    }
    return s + ")";
  }
  std::string s = type_.ToString() + " [";
  ir::ElementType e = element();
  int w = ir::StorageBytes(e);
  int64_t n = num_elements();
  for (int64_t i = 0; i < n && i < max_elements; ++i) {
    if (i) s += ", ";
    const uint8_t* p = raw() + i * w;
    char buf[64];
    if (ir::IsComplex(e)) {
      double re = numerics::LoadAsDouble(ir::ComplexPartType(e), p);
      double im = numerics::LoadAsDouble(ir::ComplexPartType(e), p + w / 2);
      std::snprintf(buf, sizeof buf, "(%g, %g)", re, im);
    } else if (ir::IsFloat(e)) {
      std::snprintf(buf, sizeof buf, "%g", numerics::LoadAsDouble(e, p));
    } else if (ir::IsUnsignedInt(e)) {
      std::snprintf(buf, sizeof buf, "%llu",
                    static_cast<unsigned long long>(numerics::LoadAsUint64(e, p)));
    } else {
      std::snprintf(buf, sizeof buf, "%lld",
                    static_cast<long long>(numerics::LoadAsInt64(e, p)));
    }
    s += buf;
  }
  if (n > max_elements) s += ", ...";
  return s + "]";
}

std::vector<int64_t> RowMajorStrides(const ir::Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * shape[i + 1];
  }
  return strides;
}

}  // namespace tpusim

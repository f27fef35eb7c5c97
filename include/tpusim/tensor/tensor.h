// Tensor: a runtime value of any IR type (array, tuple or token).
//
// Arrays are dense, row-major, one element per slot in the storage format of
// ir/element_type.h, in a 64-byte aligned buffer. Tensors share storage on
// copy and are treated as immutable once an op has returned them; an op that
// builds a result allocates it, fills it through mutable_data(), and returns it.
#ifndef TPUSIM_TENSOR_TENSOR_H_
#define TPUSIM_TENSOR_TENSOR_H_

#include <complex>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/ir/attribute.h"
#include "tpusim/ir/type.h"

namespace tpusim {

// Host-memory budget for all tensors alive at once. Defaults to 80% of
// physical memory; an allocation past it fails with kResourceExhausted
// instead of crashing. Thread-safe.
void SetHostMemoryLimit(int64_t bytes);
int64_t HostMemoryLimit();
int64_t HostMemoryInUse();

// Checked product of a shape's dimensions times `element_bytes`;
// kResourceExhausted on overflow. Use before allocating from untrusted shapes.
StatusOr<int64_t> CheckedByteSize(const ir::Shape& shape, int64_t element_bytes);

class Tensor {
 public:
  Tensor() = default;  // an empty value; valid() is false

  // A zero-filled array of `type`, whose layout it drops: values are logical
  // row-major arrays, and layouts only say how the TPU would store them.
  // REQUIRES: type.is_tensor().
  static StatusOr<Tensor> Allocate(const ir::Type& type);
  // As Allocate, but the contents are unspecified: for ops that write every
  // element, which would otherwise pay for zeroing memory twice.
  static StatusOr<Tensor> AllocateUninitialized(const ir::Type& type);
  // An array of `type` over storage that the caller filled and owns until
  // then (a file mapped into memory): `data` holds the type's bytes, 64-byte
  // aligned, and stays valid until `release` runs, once, when the last
  // Tensor sharing it is gone. Counted against the host memory limit as
  // Allocate's storage is; on any error `release` has already run. Ops never
  // write their results into it (see unique_storage).
  // REQUIRES: type.is_tensor().
  static StatusOr<Tensor> Adopt(const ir::Type& type, uint8_t* data,
                                std::function<void()> release);
  // The value of a dense elements attribute (splats are expanded).
  static StatusOr<Tensor> FromAttribute(const ir::Attribute& dense);
  static Tensor Tuple(std::vector<Tensor> elements);
  static Tensor Token();

  bool valid() const { return valid_; }
  const ir::Type& type() const { return type_; }
  ir::ElementType element() const { return type_.element(); }
  const ir::Shape& shape() const { return type_.shape(); }
  int64_t rank() const { return type_.rank(); }
  int64_t num_elements() const { return type_.num_elements(); }
  int64_t size_bytes() const { return size_bytes_; }

  // Raw storage. REQUIRES: type().is_tensor(). mutable_* only while building.
  const uint8_t* raw() const { return buffer_ ? buffer_->data : nullptr; }
  uint8_t* mutable_raw() { return buffer_ ? buffer_->data : nullptr; }
  template <typename T>
  const T* data() const { return reinterpret_cast<const T*>(raw()); }
  template <typename T>
  T* mutable_data() { return reinterpret_cast<T*>(mutable_raw()); }

  // True when no other Tensor shares this one's storage and it is not
  // adopted: an op that was handed the only reference may write its result
  // into it in place. Adopted storage (a file mapped copy-on-write) would
  // take a page fault, a page copy and a flush of every core's TLB for each
  // page written: fresh storage costs less.
  bool unique_storage() const {
    return buffer_ != nullptr && buffer_.use_count() == 1 && !buffer_->adopted;
  }

  // REQUIRES: type().is_tuple().
  const std::vector<Tensor>& tuple_elements() const { return tuple_; }

  // A new tensor of the same type whose storage is a copy of this one's.
  StatusOr<Tensor> Clone() const;
  // The same storage viewed with another shape of equal element count.
  Tensor Reshaped(const ir::Shape& shape) const;

  // Bitwise equality of type and contents (NaNs with equal bits are equal).
  bool BitwiseEquals(const Tensor& other) const;

  // A short human-readable dump, elided past `max_elements`.
  std::string ToString(int64_t max_elements = 16) const;

 private:
  struct Buffer {
    uint8_t* data = nullptr;
    int64_t bytes = 0;
    std::function<void()> release;  // empty: data came from aligned_alloc
    bool zeroed = false;  // came from the kernel all zero: Allocate need not clear it
    bool adopted = false;  // from Adopt
    ~Buffer();
  };
  bool valid_ = false;
  ir::Type type_;
  int64_t size_bytes_ = 0;
  std::shared_ptr<Buffer> buffer_;
  std::vector<Tensor> tuple_;
};

// Row-major strides in elements.
std::vector<int64_t> RowMajorStrides(const ir::Shape& shape);

// Storage C++ types for element types, for ops' typed loops.
using bf16_bits = uint16_t;
using f16_bits = uint16_t;
using c64 = std::complex<float>;
using c128 = std::complex<double>;

}  // namespace tpusim

#endif  // TPUSIM_TENSOR_TENSOR_H_

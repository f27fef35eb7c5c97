// NumPy .npy files (format versions 1.0, 2.0 and 3.0): the tensors the CLI
// reads as program inputs and writes as results.
//
// Reading accepts every numpy dtype tpusim has an element type for (bool,
// int8..int64, uint8..uint64, float16/32/64, complex64/128), in either byte
// order and in C or Fortran order; anything else (structured, object, string
// dtypes) is kUnimplemented, a malformed file kInvalidArgument.
// Writing uses the type's own dtype where numpy has one; types numpy lacks are
// widened: bf16 and the f8/f6/f4 types to float32, i2/i4 to int8, ui2/ui4 to
// uint8.
#ifndef TPUSIM_IO_NPY_H_
#define TPUSIM_IO_NPY_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "tpusim/base/status.h"
#include "tpusim/ir/element_type.h"
#include "tpusim/tensor/tensor.h"

namespace tpusim::io {

// Decodes the bytes of a .npy file; `name` labels error messages.
StatusOr<Tensor> DecodeNpy(std::string_view bytes, const std::string& name);

// Reads and decodes the file at `path` (kNotFound if it cannot be opened).
// Data that needs no reordering is not copied: a large file's tensor is the
// file mapped into memory (privately: writes to the tensor never reach the
// file), a small one's is read straight into the tensor's own buffer. A
// mapped file must not be truncated while the tensor lives (replacing it by
// rename, as WriteNpy does, is fine).
StatusOr<Tensor> ReadNpy(const std::string& path);

// A tensor of an array in numpy's memory: row-major `data` of `shape`, its
// dtype spelled as .npy headers and numpy's dtype.str do ("<f4", "|b1").
// Data that needs no change (native byte order, not bool, 64-byte aligned)
// is adopted, not copied: it must stay valid and unchanged until `release`
// runs, when the last Tensor sharing it is gone. Else it is copied, and
// `release` runs before this returns, as it does on any error. `data` is
// never written. `name` labels errors; dtypes the reader rejects are
// kUnimplemented.
StatusOr<Tensor> FromNpyMemory(const std::string& dtype, const ir::Shape& shape,
                               const uint8_t* data, std::function<void()> release,
                               const std::string& name);

// The element type a tensor of type `t` is stored as in a .npy file.
ir::ElementType NpyElementType(ir::ElementType t);

// The numpy dtype string ("<f4") of NpyElementType(t).
std::string NpyDtype(ir::ElementType t);

// Writes the elements of array `t` as NpyElementType(t.element()) stores
// them (widened where that differs) to `out`, which holds
// t.num_elements() of them.
void ToNpyElements(const Tensor& t, uint8_t* out);

// The bytes of a .npy file holding `t`. REQUIRES nothing; tuples and tokens
// are kInvalidArgument.
StatusOr<std::string> EncodeNpy(const Tensor& t);

// Writes `t` to `path` atomically: to `path`.tmp first, then renamed, so a
// failed write leaves no partial file behind. The data goes to the file from
// the tensor's own storage (widened types in pieces, converted on the way).
Status WriteNpy(const std::string& path, const Tensor& t);

// As WriteNpy, and durable as io::WriteFileDurably is (for checkpoints).
Status WriteNpyDurably(const std::string& path, const Tensor& t);

}  // namespace tpusim::io

#endif  // TPUSIM_IO_NPY_H_

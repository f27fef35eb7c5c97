#include "tpusim/io/npy.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

#include "tpusim/io/file.h"
#include "tpusim/numerics/float_arrays.h"

namespace tpusim::io {
namespace {

static_assert(std::endian::native == std::endian::little,
              "tensor storage is assumed little-endian");

using ir::ElementType;

constexpr std::string_view kMagic = "\x93NUMPY";

struct Header {
  std::string descr;
  bool fortran_order = false;
  ir::Shape shape;
};

// A reader over the header's Python dict literal, e.g.
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
class DictParser {
 public:
  DictParser(std::string_view text, const std::string& name) : s_(text), name_(name) {}

  StatusOr<Header> Parse() {
    Header h;
    bool have_descr = false, have_order = false, have_shape = false;
    TPUSIM_RETURN_IF_ERROR(Expect('{'));
    while (!Peek('}')) {
      TPUSIM_ASSIGN_OR_RETURN(std::string key, String());
      TPUSIM_RETURN_IF_ERROR(Expect(':'));
      if (key == "descr") {
        if (Peek('[')) return Unimplemented(name_ + ": structured numpy dtypes are not supported");
        TPUSIM_ASSIGN_OR_RETURN(h.descr, String());
        have_descr = true;
      } else if (key == "fortran_order") {
        TPUSIM_ASSIGN_OR_RETURN(h.fortran_order, Bool());
        have_order = true;
      } else if (key == "shape") {
        TPUSIM_ASSIGN_OR_RETURN(h.shape, Tuple());
        have_shape = true;
      } else {
        return Error("unexpected key '" + key + "'");
      }
      if (!Peek('}')) TPUSIM_RETURN_IF_ERROR(Expect(','));
    }
    if (!have_descr || !have_order || !have_shape) {
      return Error("needs 'descr', 'fortran_order' and 'shape'");
    }
    return h;
  }

 private:
  Status Error(const std::string& what) const {
    return InvalidArgument(name_ + ": bad .npy header: " + what);
  }
  void SkipSpace() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool Peek(char c) {
    SkipSpace();
    return pos_ < s_.size() && s_[pos_] == c;
  }
  Status Expect(char c) {
    if (!Peek(c)) return Error(std::string("expected '") + c + "'");
    ++pos_;
    return Status::Ok();
  }
  StatusOr<std::string> String() {
    SkipSpace();
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) {
      return Error("expected a string");
    }
    char quote = s_[pos_++];
    size_t end = s_.find(quote, pos_);
    if (end == std::string_view::npos) return Error("unterminated string");
    std::string out(s_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return out;
  }
  StatusOr<bool> Bool() {
    SkipSpace();
    for (auto [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
      if (s_.substr(pos_, std::strlen(word)) == word) {
        pos_ += std::strlen(word);
        return value;
      }
    }
    return Error("expected True or False");
  }
  StatusOr<ir::Shape> Tuple() {
    TPUSIM_RETURN_IF_ERROR(Expect('('));
    ir::Shape shape;
    while (!Peek(')')) {
      SkipSpace();
      int64_t d = 0;
      size_t start = pos_;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
        if (d > (INT64_MAX - 9) / 10) return Error("dimension too large");
        d = d * 10 + (s_[pos_++] - '0');
      }
      if (pos_ == start) return Error("expected a dimension");
      if (pos_ < s_.size() && s_[pos_] == 'L') ++pos_;  // Python 2 long
      shape.push_back(d);
      if (!Peek(')')) TPUSIM_RETURN_IF_ERROR(Expect(','));
    }
    ++pos_;
    return shape;
  }

  std::string_view s_;
  const std::string& name_;
  size_t pos_ = 0;
};

// The element type of a numpy dtype string such as "<f4"; sets `swap` for
// big-endian data.
StatusOr<ElementType> DtypeElement(const std::string& descr, const std::string& name, bool* swap) {
  if (descr.size() < 3 || std::string_view("<>|=").find(descr[0]) == std::string_view::npos) {
    return Unimplemented(name + ": numpy dtype '" + descr + "' is not supported");
  }
  *swap = descr[0] == '>';
  std::string code = descr.substr(1);
  static const std::pair<const char*, ElementType> kTypes[] = {
      {"b1", ElementType::kI1},   {"i1", ElementType::kSI8},   {"i2", ElementType::kSI16},
      {"i4", ElementType::kSI32}, {"i8", ElementType::kSI64},  {"u1", ElementType::kUI8},
      {"u2", ElementType::kUI16}, {"u4", ElementType::kUI32},  {"u8", ElementType::kUI64},
      {"f2", ElementType::kF16},  {"f4", ElementType::kF32},   {"f8", ElementType::kF64},
      {"c8", ElementType::kC64},  {"c16", ElementType::kC128},
  };
  for (const auto& [c, t] : kTypes) {
    if (code == c) return t;
  }
  return Unimplemented(name + ": numpy dtype '" + descr + "' is not supported");
}

// Reverses the bytes of each scalar (complex: of each part) in place.
void SwapBytes(uint8_t* data, int64_t count, int scalar_bytes) {
  for (int64_t i = 0; i < count; ++i) {
    uint8_t* p = data + i * scalar_bytes;
    for (int a = 0, b = scalar_bytes - 1; a < b; ++a, --b) std::swap(p[a], p[b]);
  }
}

// Reorders column-major `src` into the row-major storage of `dst`.
void FromFortranOrder(const uint8_t* src, Tensor& dst) {
  const ir::Shape& shape = dst.shape();
  int64_t w = ir::StorageBytes(dst.element());
  size_t rank = shape.size();
  std::vector<int64_t> fstride(rank), index(rank, 0);
  for (size_t d = 0, s = 1; d < rank; ++d) {
    fstride[d] = static_cast<int64_t>(s);
    s *= shape[d];
  }
  int64_t offset = 0;
  for (int64_t i = 0; i < dst.num_elements(); ++i) {
    std::memcpy(dst.mutable_raw() + i * w, src + offset * w, w);
    for (size_t d = rank; d-- > 0;) {  // advance the row-major index
      offset += fstride[d];
      if (++index[d] < shape[d]) break;
      offset -= fstride[d] * shape[d];
      index[d] = 0;
    }
  }
}

std::string Descr(ElementType t) {
  switch (t) {
    case ElementType::kI1:
      return "|b1";
    case ElementType::kSI8:
      return "|i1";
    case ElementType::kSI16:
      return "<i2";
    case ElementType::kSI32:
      return "<i4";
    case ElementType::kSI64:
      return "<i8";
    case ElementType::kUI8:
      return "|u1";
    case ElementType::kUI16:
      return "<u2";
    case ElementType::kUI32:
      return "<u4";
    case ElementType::kUI64:
      return "<u8";
    case ElementType::kF16:
      return "<f2";
    case ElementType::kF32:
      return "<f4";
    case ElementType::kF64:
      return "<f8";
    case ElementType::kC64:
      return "<c8";
    case ElementType::kC128:
      return "<c16";
    default:
      return "";  // not reached: NpyElementType maps everything above
  }
}

// What a .npy header says, and where its data starts.
struct Layout {
  ir::Type type;
  bool swap = false;     // big-endian data
  bool fortran = false;  // column-major data of rank > 1
  size_t data_start = 0;
  int64_t data_bytes = 0;
};

// Where the data of a .npy file starts, from at least its first 12 bytes.
StatusOr<size_t> DataStart(std::string_view prefix, const std::string& name) {
  if (prefix.size() < 10 || prefix.substr(0, 6) != kMagic) {
    return InvalidArgument(name + ": not a .npy file (bad magic)");
  }
  int major = static_cast<uint8_t>(prefix[6]);
  size_t len_bytes = major == 1 ? 2 : (major == 2 || major == 3) ? 4 : 0;
  if (len_bytes == 0) {
    return Unimplemented(name + ": .npy format version " + std::to_string(major) +
                         " is not supported");
  }
  if (prefix.size() < 8 + len_bytes) return InvalidArgument(name + ": truncated .npy header");
  uint64_t header_len = 0;
  for (size_t i = 0; i < len_bytes; ++i) {
    header_len |= uint64_t{static_cast<uint8_t>(prefix[8 + i])} << (8 * i);
  }
  return 8 + len_bytes + header_len;
}

// The layout of a file of `file_size` bytes whose first bytes, through its
// whole header, are `head`.
StatusOr<Layout> ParseLayout(std::string_view head, uint64_t file_size, const std::string& name) {
  TPUSIM_ASSIGN_OR_RETURN(size_t data_start, DataStart(head, name));
  if (data_start > file_size || data_start > head.size()) {
    return InvalidArgument(name + ": truncated .npy header");
  }
  size_t len_bytes = static_cast<uint8_t>(head[6]) == 1 ? 2 : 4;
  TPUSIM_ASSIGN_OR_RETURN(
      Header h,
      DictParser(head.substr(8 + len_bytes, data_start - 8 - len_bytes), name).Parse());
  Layout layout;
  TPUSIM_ASSIGN_OR_RETURN(ElementType element, DtypeElement(h.descr, name, &layout.swap));
  layout.type = ir::Type::Tensor(element, h.shape);
  TPUSIM_ASSIGN_OR_RETURN(layout.data_bytes,
                          CheckedByteSize(h.shape, ir::StorageBytes(element)));
  if (static_cast<uint64_t>(layout.data_bytes) != file_size - data_start) {
    return InvalidArgument(name + ": " + layout.type.ToString() + " needs " +
                           std::to_string(layout.data_bytes) + " data bytes, the file has " +
                           std::to_string(file_size - data_start));
  }
  layout.fortran = h.fortran_order && h.shape.size() > 1;
  layout.data_start = data_start;
  return layout;
}

// Brings data already in `t`'s storage to tpusim's form: native byte order,
// bools 0 or 1.
void Normalize(const Layout& layout, Tensor& t) {
  ElementType element = t.element();
  uint8_t* raw = t.mutable_raw();
  if (layout.swap) {
    int part = ir::IsComplex(element) ? ir::StorageBytes(ir::ComplexPartType(element))
                                      : ir::StorageBytes(element);
    SwapBytes(raw, layout.data_bytes / part, part);
  }
  if (element == ElementType::kI1) {
    for (int64_t i = 0; i < layout.data_bytes; ++i) raw[i] = raw[i] != 0;
  }
}

// A tensor of `layout` from its data bytes `data`: one copy (a reordering
// for Fortran order).
StatusOr<Tensor> FromData(const Layout& layout, const uint8_t* data) {
  TPUSIM_ASSIGN_OR_RETURN(Tensor t, Tensor::AllocateUninitialized(layout.type));
  if (layout.fortran) {
    FromFortranOrder(data, t);
  } else if (layout.data_bytes > 0) {
    std::memcpy(t.mutable_raw(), data, static_cast<size_t>(layout.data_bytes));
  }
  Normalize(layout, t);
  return t;
}

// An open file descriptor, closed on scope exit.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// Reads exactly `size` bytes at `offset`; false on an error or early end.
bool ReadAt(int fd, uint8_t* out, size_t size, uint64_t offset) {
  while (size > 0) {
    ssize_t n = ::pread(fd, out, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    out += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return true;
}

// Files with at least this much data are mapped instead of read: below it,
// setting up and tearing down a mapping costs more than copying.
constexpr int64_t kMapBytes = int64_t{256} << 10;

// The tensor of a whole file mapped copy-on-write, or an invalid tensor when
// the mapping fails (the caller then reads the file instead).
StatusOr<Tensor> MapData(int fd, uint64_t file_size, const Layout& layout) {
  void* base = ::mmap(nullptr, file_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  if (base == MAP_FAILED) return Tensor();
#ifdef MADV_POPULATE_READ
  // Maps the pages (read-only, still shared with the page cache) in one
  // call rather than a fault per 64 KiB on first reading; a hint only.
  (void)::madvise(base, file_size, MADV_POPULATE_READ);
#endif
  auto* data = static_cast<uint8_t*>(base) + layout.data_start;
  return Tensor::Adopt(layout.type, data, [base, file_size] { ::munmap(base, file_size); });
}

// Reads a file whose data cannot be read as a stream of bytes (a pipe).
StatusOr<Tensor> ReadStream(int fd, const std::string& path) {
  std::string bytes;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return InvalidArgument("cannot read " + path);
    if (n == 0) break;
    bytes.append(buf, static_cast<size_t>(n));
  }
  return DecodeNpy(bytes, path);
}

// The header of a .npy file holding `t`, padded so that the data starts
// 64-byte aligned.
std::string HeaderOf(const Tensor& t, ElementType stored) {
  std::string shape = "(";
  for (int64_t d : t.shape()) shape += std::to_string(d) + ", ";
  if (t.rank() > 1) shape.resize(shape.size() - 2);
  if (t.rank() == 1) shape.resize(shape.size() - 1);
  shape += ")";
  std::string dict =
      "{'descr': '" + Descr(stored) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad with spaces so that the data starts on a 64-byte boundary, as numpy
  // does; version 2.0 only when the header outgrows 1.0's 16-bit length.
  bool v2 = dict.size() + 64 > 0xffff;
  size_t prefix = kMagic.size() + 2 + (v2 ? 4 : 2);
  std::string header = dict + std::string(63 - (prefix + dict.size()) % 64, ' ') + '\n';
  std::string out(kMagic);
  out += static_cast<char>(v2 ? 2 : 1);
  out += '\0';
  for (size_t i = 0; i < (v2 ? 4u : 2u); ++i) out += static_cast<char>(header.size() >> (8 * i));
  return out + header;
}

Status CheckWritable(const Tensor& t) {
  if (!t.valid() || !t.type().is_tensor()) {
    return InvalidArgument("only tensors can be written as .npy, not " +
                           (t.valid() ? t.type().ToString() : std::string("an empty value")));
  }
  return Status::Ok();
}

// Elements [begin, begin + count) of `t` in the stored type's bytes, into
// `out`. REQUIRES: NpyElementType(t.element()) != t.element().
void WidenInto(const Tensor& t, int64_t begin, int64_t count, uint8_t* out) {
  ElementType e = t.element();
  const uint8_t* in = t.raw() + begin * ir::StorageBytes(e);
  if (ir::IsFloat(e)) {
    numerics::ConvertFloatArray(e, in, ElementType::kF32, out, count);
  } else {  // sub-byte integers are already sign- or zero-extended bytes
    std::memcpy(out, in, static_cast<size_t>(count));
  }
}

Status WriteTo(const std::string& path, const Tensor& t, bool durable) {
  TPUSIM_RETURN_IF_ERROR(CheckWritable(t));
  ElementType stored = NpyElementType(t.element());
  std::string header = HeaderOf(t, stored);
  TPUSIM_ASSIGN_OR_RETURN(AtomicFileWriter file, AtomicFileWriter::Create(path));
  if (stored == t.element()) {
    TPUSIM_RETURN_IF_ERROR(file.Append(
        {header, {reinterpret_cast<const char*>(t.raw()), static_cast<size_t>(t.size_bytes())}}));
    return file.Commit(durable);
  }
  // Widened in pieces that stay in cache, each appended as it is made.
  TPUSIM_RETURN_IF_ERROR(file.Append({header}));
  constexpr int64_t kChunk = 64 << 10;
  const int out_w = ir::StorageBytes(stored);
  std::vector<uint8_t> chunk(static_cast<size_t>(std::min(kChunk, t.num_elements()) * out_w));
  for (int64_t i = 0; i < t.num_elements(); i += kChunk) {
    int64_t m = std::min(kChunk, t.num_elements() - i);
    WidenInto(t, i, m, chunk.data());
    TPUSIM_RETURN_IF_ERROR(
        file.Append({{reinterpret_cast<const char*>(chunk.data()), static_cast<size_t>(m * out_w)}}));
  }
  return file.Commit(durable);
}

}  // namespace

StatusOr<Tensor> DecodeNpy(std::string_view bytes, const std::string& name) {
  TPUSIM_ASSIGN_OR_RETURN(Layout layout, ParseLayout(bytes, bytes.size(), name));
  return FromData(layout, reinterpret_cast<const uint8_t*>(bytes.data()) + layout.data_start);
}

StatusOr<Tensor> ReadNpy(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return NotFound("cannot open " + path);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return InvalidArgument("cannot read " + path);
  if (!S_ISREG(st.st_mode)) return ReadStream(fd.get(), path);
  const auto file_size = static_cast<uint64_t>(st.st_size);
  // The header: its length from the first bytes, then the rest of it.
  std::string head(std::min<uint64_t>(file_size, 4096), '\0');
  if (!ReadAt(fd.get(), reinterpret_cast<uint8_t*>(head.data()), head.size(), 0)) {
    return InvalidArgument("cannot read " + path);
  }
  TPUSIM_ASSIGN_OR_RETURN(size_t data_start, DataStart(head, path));
  if (data_start > head.size() && data_start <= file_size) {
    size_t have = head.size();
    head.resize(data_start);
    if (!ReadAt(fd.get(), reinterpret_cast<uint8_t*>(head.data()) + have, data_start - have,
                have)) {
      return InvalidArgument("cannot read " + path);
    }
  }
  TPUSIM_ASSIGN_OR_RETURN(Layout layout, ParseLayout(head, file_size, path));
  const bool as_is = !layout.swap && !layout.fortran && layout.type.element() != ElementType::kI1;
  if (as_is && layout.data_bytes >= kMapBytes && layout.data_start % 64 == 0) {
    TPUSIM_ASSIGN_OR_RETURN(Tensor t, MapData(fd.get(), file_size, layout));
    if (t.valid()) return t;
  }
  if (layout.fortran) {  // reordered from a copy
    std::vector<uint8_t> data(static_cast<size_t>(layout.data_bytes));
    if (!ReadAt(fd.get(), data.data(), data.size(), layout.data_start)) {
      return InvalidArgument("cannot read " + path);
    }
    return FromData(layout, data.data());
  }
  TPUSIM_ASSIGN_OR_RETURN(Tensor t, Tensor::AllocateUninitialized(layout.type));
  if (!ReadAt(fd.get(), t.mutable_raw(), static_cast<size_t>(layout.data_bytes),
              layout.data_start)) {
    return InvalidArgument("cannot read " + path);
  }
  Normalize(layout, t);
  return t;
}

StatusOr<Tensor> FromNpyMemory(const std::string& dtype, const ir::Shape& shape,
                               const uint8_t* data, std::function<void()> release,
                               const std::string& name) {
  auto release_now = [&release] {
    if (release) std::exchange(release, nullptr)();
  };
  Layout layout;
  StatusOr<ElementType> element = DtypeElement(dtype, name, &layout.swap);
  StatusOr<int64_t> bytes =
      element.ok() ? CheckedByteSize(shape, ir::StorageBytes(*element)) : element.status();
  if (!bytes.ok()) {
    release_now();
    return bytes.status();
  }
  layout.type = ir::Type::Tensor(*element, shape);
  layout.data_bytes = *bytes;
  const bool as_is = !layout.swap && *element != ElementType::kI1;
  if (as_is && *bytes > 0 && reinterpret_cast<uintptr_t>(data) % 64 == 0) {
    // Ops never write into adopted storage (Tensor::unique_storage).
    return Tensor::Adopt(layout.type, const_cast<uint8_t*>(data), std::move(release));
  }
  StatusOr<Tensor> t = FromData(layout, data);
  release_now();
  return t;
}

ElementType NpyElementType(ElementType t) {
  switch (t) {
    case ElementType::kSI2:
    case ElementType::kSI4:
      return ElementType::kSI8;
    case ElementType::kUI2:
    case ElementType::kUI4:
      return ElementType::kUI8;
    default:
      break;
  }
  if (ir::IsFloat(t) && t != ElementType::kF16 && ir::BitWidth(t) <= 16) {
    return ElementType::kF32;
  }
  return t;
}

std::string NpyDtype(ElementType t) { return Descr(NpyElementType(t)); }

void ToNpyElements(const Tensor& t, uint8_t* out) {
  if (NpyElementType(t.element()) == t.element()) {
    if (t.size_bytes() > 0) std::memcpy(out, t.raw(), static_cast<size_t>(t.size_bytes()));
  } else {
    WidenInto(t, 0, t.num_elements(), out);
  }
}

StatusOr<std::string> EncodeNpy(const Tensor& t) {
  TPUSIM_RETURN_IF_ERROR(CheckWritable(t));
  ElementType stored = NpyElementType(t.element());
  std::string out = HeaderOf(t, stored);
  size_t header = out.size();
  if (stored == t.element()) {
    out.append(reinterpret_cast<const char*>(t.raw()), static_cast<size_t>(t.size_bytes()));
    return out;
  }
  out.resize(header + static_cast<size_t>(t.num_elements() * ir::StorageBytes(stored)));
  ToNpyElements(t, reinterpret_cast<uint8_t*>(out.data()) + header);
  return out;
}

Status WriteNpy(const std::string& path, const Tensor& t) {
  return WriteTo(path, t, /*durable=*/false);
}

Status WriteNpyDurably(const std::string& path, const Tensor& t) {
  return WriteTo(path, t, /*durable=*/true);
}

}  // namespace tpusim::io

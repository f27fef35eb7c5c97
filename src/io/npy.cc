#include "tpusim/io/npy.h"

#include <bit>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "tpusim/io/file.h"
#include "tpusim/numerics/float_formats.h"

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

}  // namespace

StatusOr<Tensor> DecodeNpy(std::string_view bytes, const std::string& name) {
  if (bytes.size() < 10 || bytes.substr(0, 6) != kMagic) {
    return InvalidArgument(name + ": not a .npy file (bad magic)");
  }
  int major = static_cast<uint8_t>(bytes[6]);
  size_t len_bytes = major == 1 ? 2 : (major == 2 || major == 3) ? 4 : 0;
  if (len_bytes == 0) {
    return Unimplemented(name + ": .npy format version " + std::to_string(major) +
                         " is not supported");
  }
  if (bytes.size() < 8 + len_bytes) return InvalidArgument(name + ": truncated .npy header");
  uint64_t header_len = 0;
  for (size_t i = 0; i < len_bytes; ++i) {
    header_len |= uint64_t{static_cast<uint8_t>(bytes[8 + i])} << (8 * i);
  }
  size_t data_start = 8 + len_bytes + header_len;
  if (data_start > bytes.size()) return InvalidArgument(name + ": truncated .npy header");
  TPUSIM_ASSIGN_OR_RETURN(Header h,
                          DictParser(bytes.substr(8 + len_bytes, header_len), name).Parse());
  bool swap = false;
  TPUSIM_ASSIGN_OR_RETURN(ElementType element, DtypeElement(h.descr, name, &swap));
  ir::Type type = ir::Type::Tensor(element, h.shape);
  TPUSIM_ASSIGN_OR_RETURN(int64_t size, CheckedByteSize(h.shape, ir::StorageBytes(element)));
  if (static_cast<uint64_t>(size) != bytes.size() - data_start) {
    return InvalidArgument(name + ": " + type.ToString() + " needs " + std::to_string(size) +
                           " data bytes, the file has " +
                           std::to_string(bytes.size() - data_start));
  }
  TPUSIM_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(type));
  std::string data(bytes.substr(data_start));
  uint8_t* raw = reinterpret_cast<uint8_t*>(data.data());
  if (swap) {
    int part = ir::IsComplex(element) ? ir::StorageBytes(ir::ComplexPartType(element))
                                      : ir::StorageBytes(element);
    SwapBytes(raw, size / part, part);
  }
  if (element == ElementType::kI1) {
    for (int64_t i = 0; i < size; ++i) raw[i] = raw[i] != 0;
  }
  if (h.fortran_order && t.rank() > 1) {
    FromFortranOrder(raw, t);
  } else if (size > 0) {
    std::memcpy(t.mutable_raw(), raw, size);
  }
  return t;
}

StatusOr<Tensor> ReadNpy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot open " + path);
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return InvalidArgument("cannot read " + path);
  return DecodeNpy(buf.str(), path);
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

StatusOr<std::string> EncodeNpy(const Tensor& t) {
  if (!t.valid() || !t.type().is_tensor()) {
    return InvalidArgument("only tensors can be written as .npy, not " +
                           (t.valid() ? t.type().ToString() : std::string("an empty value")));
  }
  ElementType stored = NpyElementType(t.element());
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
  out += header;
  if (stored == t.element()) {
    out.append(reinterpret_cast<const char*>(t.raw()), t.size_bytes());
    return out;
  }
  int in_w = ir::StorageBytes(t.element());
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    uint8_t v[4];
    if (stored == ElementType::kF32) {
      float f = static_cast<float>(numerics::LoadAsDouble(t.element(), t.raw() + i * in_w));
      std::memcpy(v, &f, 4);
      out.append(reinterpret_cast<const char*>(v), 4);
    } else {  // sub-byte integers are already sign- or zero-extended bytes
      out += static_cast<char>(t.raw()[i * in_w]);
    }
  }
  return out;
}

Status WriteNpy(const std::string& path, const Tensor& t) {
  TPUSIM_ASSIGN_OR_RETURN(std::string bytes, EncodeNpy(t));
  return WriteFileAtomically(path, bytes);
}

}  // namespace tpusim::io

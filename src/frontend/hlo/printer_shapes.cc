// XLA's spelling of shapes and literals, as HloInstruction::ToString prints
// them, so that printed modules read like XLA's own dumps.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "frontend/hlo/printer_internal.h"
#include "tpusim/numerics/float_formats.h"

namespace tpusim::frontend::hlo {
namespace {

using ir::ElementType;

std::string Printf(int precision, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
  return buf;
}

// XLA's RoundTripFpToString: the type's digits10 when that reads back to the
// same value, else max_digits10. Types of 16 bits or fewer take the shortest
// precision that reads back to the same bits.
std::string FloatString(ElementType t, double v) {
  if (std::isnan(v)) return std::signbit(v) ? "-nan" : "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  if (t == ElementType::kF32) {
    std::string s = Printf(6, v);
    return std::strtof(s.c_str(), nullptr) == static_cast<float>(v) ? s : Printf(9, v);
  }
  if (t == ElementType::kF64) {
    std::string s = Printf(15, v);
    return std::strtod(s.c_str(), nullptr) == v ? s : Printf(17, v);
  }
  const uint16_t bits = numerics::EncodeSmallFloat(t, v);
  for (int p = 1; p < 17; ++p) {
    std::string s = Printf(p, v);
    if (numerics::EncodeSmallFloat(t, std::strtod(s.c_str(), nullptr)) == bits) return s;
  }
  return Printf(17, v);
}

template <class T>
std::string ComplexString(ElementType part, const uint8_t* p) {
  T re, im;
  std::memcpy(&re, p, sizeof(T));
  std::memcpy(&im, p + sizeof(T), sizeof(T));
  std::string s = "(";
  s += FloatString(part, re);
  s += ", ";
  s += FloatString(part, im);
  return s + ")";
}

// One element; predicates inside arrays print as 0/1, as XLA does.
std::string ElementString(ElementType t, const uint8_t* p, bool in_array) {
  if (ir::IsBool(t)) {
    if (in_array) return p[0] != 0 ? "1" : "0";
    return p[0] != 0 ? "true" : "false";
  }
  if (ir::IsUnsignedInt(t)) return std::to_string(numerics::LoadAsUint64(t, p));
  if (ir::IsSignedInt(t)) return std::to_string(numerics::LoadAsInt64(t, p));
  if (t == ElementType::kC64) return ComplexString<float>(ElementType::kF32, p);
  if (t == ElementType::kC128) return ComplexString<double>(ElementType::kF64, p);
  return FloatString(t, numerics::LoadAsDouble(t, p));
}

// XLA's DenseArrayToStringHelper: nested braces, with spaces inside the
// innermost braces of arrays of rank 2 or more and `/*iN=k*/` markers above
// rank 3, then CompactOneline's single-space joining.
class ArrayPrinter {
 public:
  explicit ArrayPrinter(const ir::Attribute& dense)
      : dense_(dense),
        shape_(dense.type().shape()),
        element_(dense.type().element()),
        width_(ir::StorageBytes(element_)),
        splat_(dense.is_splat()) {}

  std::string Print() {
    std::vector<int64_t> index;
    Recurse(0, index);
    return Compact(out_);
  }

 private:
  std::string Brace(const std::string& brace, size_t depth, const std::vector<int64_t>& index) {
    const size_t rank = shape_.size();
    if (rank == 1) return brace;
    const size_t remaining = rank - depth;
    if (remaining == 1) {
      const bool wide = shape_[depth] > 1;
      const std::string space = wide ? " " : "";
      return brace == "{" ? "  {" + space : space + brace;
    }
    if (brace == "{") {
      if (rank > 3 && !index.empty()) {
        return "{ /*i" + std::to_string(index.size() - 1) + "=" + std::to_string(index.back()) +
               "*/\n";
      }
      return "{\n";
    }
    return "\n}";
  }

  void Recurse(size_t depth, std::vector<int64_t>& index) {
    if (depth == shape_.size()) {
      out_ += ElementString(element_, dense_.bytes().data() + (splat_ ? 0 : linear_) * width_,
                            !shape_.empty());
      ++linear_;
      return;
    }
    out_ += Brace("{", depth, index);
    for (int64_t i = 0; i < shape_[depth]; ++i) {
      index.push_back(i);
      Recurse(depth + 1, index);
      index.pop_back();
      if (i + 1 < shape_[depth]) out_ += depth + 1 < shape_.size() ? ",\n" : ", ";
    }
    out_ += Brace("}", depth, index);
  }

  // XLA's CompactOneline: runs of spaces and newlines become one space.
  static std::string Compact(const std::string& s) {
    std::string r;
    bool pending = false;
    for (char c : s) {
      if (c == ' ' || c == '\n') {
        pending = !r.empty();
        continue;
      }
      if (pending) r += ' ';
      pending = false;
      r += c;
    }
    return r;
  }

  const ir::Attribute& dense_;
  const ir::Shape& shape_;
  ElementType element_;
  int width_;
  bool splat_;
  int64_t linear_ = 0;
  std::string out_;
};

}  // namespace

std::string_view HloTypeName(ElementType t) {
  switch (t) {
    case ElementType::kI1:
      return "pred";
    case ElementType::kSI2:
      return "s2";
    case ElementType::kSI4:
      return "s4";
    case ElementType::kSI8:
      return "s8";
    case ElementType::kSI16:
      return "s16";
    case ElementType::kSI32:
      return "s32";
    case ElementType::kSI64:
      return "s64";
    case ElementType::kUI2:
      return "u2";
    case ElementType::kUI4:
      return "u4";
    case ElementType::kUI8:
      return "u8";
    case ElementType::kUI16:
      return "u16";
    case ElementType::kUI32:
      return "u32";
    case ElementType::kUI64:
      return "u64";
    case ElementType::kF4E2M1FN:
      return "f4e2m1fn";
    case ElementType::kF6E2M3FN:
      return "f6e2m3fn";
    case ElementType::kF6E3M2FN:
      return "f6e3m2fn";
    case ElementType::kF8E3M4:
      return "f8e3m4";
    case ElementType::kF8E4M3:
      return "f8e4m3";
    case ElementType::kF8E4M3FN:
      return "f8e4m3fn";
    case ElementType::kF8E4M3FNUZ:
      return "f8e4m3fnuz";
    case ElementType::kF8E4M3B11FNUZ:
      return "f8e4m3b11fnuz";
    case ElementType::kF8E5M2:
      return "f8e5m2";
    case ElementType::kF8E5M2FNUZ:
      return "f8e5m2fnuz";
    case ElementType::kF8E8M0FNU:
      return "f8e8m0fnu";
    case ElementType::kF16:
      return "f16";
    case ElementType::kBF16:
      return "bf16";
    case ElementType::kF32:
      return "f32";
    case ElementType::kF64:
      return "f64";
    case ElementType::kC64:
      return "c64";
    case ElementType::kC128:
      return "c128";
  }
  return "unknown";
}

std::string IntList(const std::vector<int64_t>& v) {
  std::string s = "{";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(v[i]);
  }
  return s + "}";
}

std::string ShapeString(const ir::Type& type, bool with_layout) {
  if (type.is_token()) return "token[]";
  if (type.is_tuple()) {
    std::string s = "(";
    for (size_t i = 0; i < type.tuple_elements().size(); ++i) {
      if (i) s += ", ";
      s += ShapeString(type.tuple_elements()[i], with_layout);
    }
    return s + ")";
  }
  std::string s(HloTypeName(type.element()));
  s += "[";
  for (int64_t i = 0; i < type.rank(); ++i) {
    if (i) s += ",";
    s += std::to_string(type.dim(i));
  }
  s += "]";
  if (with_layout && type.rank() > 0) s += ir::LayoutString(type.MinorToMajor());
  return s;
}

std::string LiteralString(const ir::Attribute& dense) { return ArrayPrinter(dense).Print(); }

}  // namespace tpusim::frontend::hlo

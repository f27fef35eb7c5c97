#include "tpusim/ir/element_type.h"

#include <array>

namespace tpusim::ir {
namespace {

struct Info {
  std::string_view name;
  int bits;
  int storage;
};

constexpr std::array<Info, kNumElementTypes> kInfo = {{
    {"i1", 1, 1},
    {"i2", 2, 1}, {"i4", 4, 1}, {"i8", 8, 1}, {"i16", 16, 2}, {"i32", 32, 4},
    {"i64", 64, 8},
    {"ui2", 2, 1}, {"ui4", 4, 1}, {"ui8", 8, 1}, {"ui16", 16, 2},
    {"ui32", 32, 4}, {"ui64", 64, 8},
    {"f4E2M1FN", 4, 1}, {"f6E2M3FN", 6, 1}, {"f6E3M2FN", 6, 1},
    {"f8E3M4", 8, 1}, {"f8E4M3", 8, 1}, {"f8E4M3FN", 8, 1},
    {"f8E4M3FNUZ", 8, 1}, {"f8E4M3B11FNUZ", 8, 1}, {"f8E5M2", 8, 1},
    {"f8E5M2FNUZ", 8, 1}, {"f8E8M0FNU", 8, 1},
    {"f16", 16, 2}, {"bf16", 16, 2}, {"f32", 32, 4}, {"f64", 64, 8},
    {"complex<f32>", 64, 8}, {"complex<f64>", 128, 16},
}};

const Info& Get(ElementType t) { return kInfo[static_cast<int>(t)]; }

}  // namespace

std::string_view ElementTypeName(ElementType t) { return Get(t).name; }

std::optional<ElementType> ParseElementType(std::string_view s) {
  if (s.size() > 2 && s[0] == 's' && s[1] == 'i') s.remove_prefix(1);
  for (int i = 0; i < kNumElementTypes; ++i) {
    if (kInfo[i].name == s) return static_cast<ElementType>(i);
  }
  return std::nullopt;
}

bool IsBool(ElementType t) { return t == ElementType::kI1; }
bool IsSignedInt(ElementType t) {
  return t >= ElementType::kSI2 && t <= ElementType::kSI64;
}
bool IsUnsignedInt(ElementType t) {
  return t >= ElementType::kUI2 && t <= ElementType::kUI64;
}
bool IsInteger(ElementType t) { return IsSignedInt(t) || IsUnsignedInt(t); }
bool IsFloat(ElementType t) {
  return t >= ElementType::kF4E2M1FN && t <= ElementType::kF64;
}
bool IsComplex(ElementType t) {
  return t == ElementType::kC64 || t == ElementType::kC128;
}
int BitWidth(ElementType t) { return Get(t).bits; }
int StorageBytes(ElementType t) { return Get(t).storage; }
ElementType ComplexPartType(ElementType t) {
  return t == ElementType::kC128 ? ElementType::kF64 : ElementType::kF32;
}

}  // namespace tpusim::ir

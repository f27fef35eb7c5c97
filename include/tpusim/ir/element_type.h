// Element types of StableHLO tensors and how each is stored in memory.
//
// Storage is one element per slot, never packed: i1 is a byte (0 or 1),
// 2- and 4-bit integers are sign- or zero-extended into a byte, f8 types are
// their raw bits in a byte, f16/bf16 their raw bits in 16 bits, complex types
// are (real, imag) pairs of f32 or f64.
#ifndef TPUSIM_IR_ELEMENT_TYPE_H_
#define TPUSIM_IR_ELEMENT_TYPE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tpusim::ir {

enum class ElementType : uint8_t {
  kI1,
  kSI2, kSI4, kSI8, kSI16, kSI32, kSI64,
  kUI2, kUI4, kUI8, kUI16, kUI32, kUI64,
  kF4E2M1FN, kF6E2M3FN, kF6E3M2FN,
  kF8E3M4, kF8E4M3, kF8E4M3FN, kF8E4M3FNUZ, kF8E4M3B11FNUZ, kF8E5M2,
  kF8E5M2FNUZ, kF8E8M0FNU,
  kF16, kBF16, kF32, kF64,
  kC64, kC128,
};

inline constexpr int kNumElementTypes = static_cast<int>(ElementType::kC128) + 1;

// MLIR spelling: "i1", "i32" (signless ints are signed), "ui8", "bf16",
// "f8E4M3FN", "complex<f32>".
std::string_view ElementTypeName(ElementType t);
// Parses the MLIR spelling; accepts "si32" and "i32" alike.
std::optional<ElementType> ParseElementType(std::string_view s);

bool IsBool(ElementType t);
bool IsSignedInt(ElementType t);    // si2..si64
bool IsUnsignedInt(ElementType t);  // ui2..ui64
bool IsInteger(ElementType t);      // signed or unsigned, not i1
bool IsFloat(ElementType t);        // every real floating type, f4 to f64
bool IsComplex(ElementType t);
// Bits of the type's value (i1: 1, si4: 4, bf16: 16, complex<f32>: 64).
int BitWidth(ElementType t);
// Bytes of one stored element (si4: 1, complex<f32>: 8).
int StorageBytes(ElementType t);
// The element type of real and imaginary parts: C64 -> F32, C128 -> F64.
ElementType ComplexPartType(ElementType t);

}  // namespace tpusim::ir

#endif  // TPUSIM_IR_ELEMENT_TYPE_H_

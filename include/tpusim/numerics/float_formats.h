// Conversions between f32/f64 and the narrow floating types (bf16, f16, the
// f8/f6/f4 variants), and generic element load/store helpers.
//
// Everything here follows IEEE round-to-nearest-even unless a name says
// otherwise; the TPU's own conversion rules are in numerics/tpu.h.
#ifndef TPUSIM_NUMERICS_FLOAT_FORMATS_H_
#define TPUSIM_NUMERICS_FLOAT_FORMATS_H_

#include <cstdint>

#include "tpusim/ir/element_type.h"

namespace tpusim::numerics {

// bf16: round to nearest even; NaN stays NaN (made quiet), infinities kept,
// overflow goes to infinity, subnormals kept (IEEE behaviour).
uint16_t FloatToBf16(float f);
float Bf16ToFloat(uint16_t bits);

// IEEE binary16.
uint16_t FloatToHalf(float f);
uint16_t DoubleToHalf(double d);
float HalfToFloat(uint16_t bits);

// Any floating element type of 16 bits or fewer (bf16, f16, f8*, f6*, f4*):
// the bits of the value nearest to `v` (round to nearest even). Overflow gives
// infinity where the type has one, else NaN for the FN/FNUZ types that have a
// NaN, else the largest finite value (saturating types without NaN).
// REQUIRES: IsFloat(t) && BitWidth(t) <= 16.
uint16_t EncodeSmallFloat(ir::ElementType t, double v);
// The exact value of `bits` in type t. REQUIRES as above.
double DecodeSmallFloat(ir::ElementType t, uint16_t bits);

// Largest finite value and smallest positive normal of a float type.
double MaxFinite(ir::ElementType t);
double MinNormal(ir::ElementType t);

// Generic per-element access to tensor storage, for paths that are not
// performance critical (conversions, printing, literals). `p` points to one
// stored element of type t.
//   LoadAsDouble: value as a double (complex: the real part; ints exact to 2^53).
//   LoadAsInt64: integer/bool value; floats truncated toward zero.
//   StoreDouble / StoreInt64: the stored form of v (floats round to nearest
//   even, ints wrap modulo 2^bits, bools are v != 0).
double LoadAsDouble(ir::ElementType t, const uint8_t* p);
int64_t LoadAsInt64(ir::ElementType t, const uint8_t* p);
uint64_t LoadAsUint64(ir::ElementType t, const uint8_t* p);
void StoreDouble(ir::ElementType t, double v, uint8_t* p);
void StoreInt64(ir::ElementType t, int64_t v, uint8_t* p);

}  // namespace tpusim::numerics

#endif  // TPUSIM_NUMERICS_FLOAT_FORMATS_H_

// Scalar special functions behind the CHLO math ops, in double precision.
//
// Every function is accurate to a few ulps of double wherever the function is
// well conditioned, so results rounded to f32 or a narrower type are nearly
// always correctly rounded. Values at poles, infinities and outside the domain
// follow XLA's definitions of the CHLO ops (chlo-ops.md and its lowering to
// StableHLO), not the C library's where the two differ. Internal to src/ops.
#ifndef TPUSIM_OPS_KERNELS_SPECIAL_FUNCTIONS_H_
#define TPUSIM_OPS_KERNELS_SPECIAL_FUNCTIONS_H_

#include <complex>

namespace tpusim::ops::special {

// log|Gamma(x)|; +inf at the poles (0, -1, -2, ...) and at +-inf.
double Lgamma(double x);

// psi(x) = Gamma'(x) / Gamma(x); NaN at the poles (0, -1, -2, ..., -inf).
double Digamma(double x);

// psi^(n)(x), the n-th derivative of Digamma, for natural n given as a float;
// NaN when n is negative or not an integer.
double Polygamma(double n, double x);

// Hurwitz zeta(x, q) = sum over k >= 0 of (q + k)^-x. NaN for x < 1 and for
// q <= 0 with non-integer x; +inf for x == 1; at the poles (integer q <= 0)
// +inf when x is an even integer and NaN otherwise. Also NaN for q below
// about -2^20, where the terms up to q + k > 0 are too many to sum.
double Zeta(double x, double q);

// The inverse of erf: +-inf at +-1, NaN outside [-1, 1].
double ErfInv(double x);

// exp(-|x|) * I1(x), the exponentially scaled modified Bessel function of
// the first kind of order one.
double BesselI1e(double x);

// chlo._asin_acos_kernel: sqrt(a^2 - x^2) + i log(a + sqrt(a^2 - 1)) with
// x = |Re z|, y = |Im z|, a = (hypot(x + 1, y) + hypot(x - 1, y)) / 2; the
// functions below are simple combinations of it.
std::complex<double> AsinAcosKernel(std::complex<double> z);

// Complex inverse trigonometric and hyperbolic functions with the branch
// cuts and signed-zero conventions of XLA's CHLO lowering (Hull et al.'s
// algorithm, accurate across the whole plane, including near the cuts).
std::complex<double> Asin(std::complex<double> z);
std::complex<double> Acos(std::complex<double> z);
std::complex<double> Asinh(std::complex<double> z);
std::complex<double> Acosh(std::complex<double> z);
std::complex<double> Atanh(std::complex<double> z);
std::complex<double> Atan(std::complex<double> z);

}  // namespace tpusim::ops::special

#endif  // TPUSIM_OPS_KERNELS_SPECIAL_FUNCTIONS_H_

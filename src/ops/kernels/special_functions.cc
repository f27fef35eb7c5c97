#include "ops/kernels/special_functions.h"

#include <math.h>  // lgamma_r: std::lgamma writes the global signgam

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>

namespace tpusim::ops::special {
namespace {

using c128 = std::complex<double>;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kPi = std::numbers::pi;
constexpr double kEps = std::numeric_limits<double>::epsilon();

bool IsInteger(double x) { return x == std::floor(x); }

// ---------------------------------------------------------------------------
// Hurwitz zeta by the Euler-Maclaurin formula (Johansson 2015, eq. 5): sum the
// first terms directly until q + k >= kEulerMaclaurinStart, then add the
// integral, the half term and the Bernoulli corrections of the tail.

constexpr double kEulerMaclaurinStart = 9;
constexpr int64_t kMinDirectTerms = 9;
// Direct terms allowed before giving up on q far below zero, where every term
// up to -q has to be summed.
constexpr int64_t kMaxDirectTerms = int64_t{1} << 20;
// B_2j / (2j)!, j = 1, 2, ...
constexpr std::array<double, 12> kBernoulliOverFactorial = {
    1.0 / 12,
    -1.0 / 720,
    1.0 / 30240,
    -1.0 / 1209600,
    1.0 / 47900160,
    -691.0 / 1307674368000,
    1.0 / 74724249600,
    -3617.0 / 10670622842880000,
    43867.0 / 5109094217170944000,
    -174611.0 / 802857662698291200000.0,
    77683.0 / 14101100039391805440000.0,
    -236364091.0 / 1693824136731743669452800000.0,
};

// zeta(x, q) for x > 1 away from the poles handled by Zeta.
double HurwitzSeries(double x, double q) {
  // For q < 0 the direct terms are large and of both signs; Neumaier's
  // compensated sum keeps what their cancellation would lose.
  double sum = 0, compensation = 0;
  int64_t k = 0;
  double a = q;
  // q + k is formed afresh each time so that rounding does not accumulate.
  for (; a < kEulerMaclaurinStart || k < kMinDirectTerms; a = q + static_cast<double>(++k)) {
    if (k >= kMaxDirectTerms) return kNaN;
    const double term = std::pow(a, -x);
    const double next = sum + term;
    if (std::isfinite(next)) {
      compensation += std::fabs(sum) >= std::fabs(term) ? (sum - next) + term : (term - next) + sum;
    }
    sum = next;
  }
  const double a_pow = std::pow(a, -x);  // a^-x
  double tail = a_pow * a / (x - 1) + 0.5 * a_pow;
  // The j-th correction is B_2j/(2j)! * x (x+1) ... (x+2j-2) * a^(-x-2j+1).
  double factor = x * a_pow / a;
  for (size_t j = 0; j < kBernoulliOverFactorial.size(); ++j) {
    const double term = kBernoulliOverFactorial[j] * factor;
    tail += term;
    if (std::fabs(term) <= kEps * 0.25 * std::fabs(sum + tail)) break;
    const double n = 2.0 * static_cast<double>(j) + 1;
    factor *= (x + n) * (x + n + 1) / (a * a);
  }
  return sum + (compensation + tail);
}

// ---------------------------------------------------------------------------
// Digamma. Near its positive root x0 psi has no accurate closed form in
// double, so psi is expanded there in a Taylor series,
//   psi(x0 + t) = sum over k >= 1 of (-1)^(k+1) zeta(k+1, x0) t^k,
// and carried to other arguments by psi(x + 1) = psi(x) + 1/x in the
// direction that adds terms of the result's sign (no cancellation).

// x0 as the unevaluated sum hi + lo.
constexpr double kDigammaRootHi = 1.4616321449683622;
constexpr double kDigammaRootLo = 9.549995429965697e-17;
// The series is used for |t| <= kRootWindow; there its terms fall by about
// (kRootWindow / x0) per order, below 1e-19 relative after kRootTerms.
constexpr double kRootWindow = 0.5;
constexpr int kRootTerms = 40;
// From here on the asymptotic series is accurate to double precision.
constexpr double kDigammaAsymptoticStart = 10;
// B_2k / (2k), k = 1, 2, ...
constexpr std::array<double, 8> kBernoulliOverIndex = {
    1.0 / 12,  -1.0 / 120,     1.0 / 252, -1.0 / 240,
    1.0 / 132, -691.0 / 32760, 1.0 / 12,  -3617.0 / 8160,
};

const std::array<double, kRootTerms>& RootSeriesCoefficients() {
  static const std::array<double, kRootTerms> coefficients = [] {
    std::array<double, kRootTerms> c{};
    const double x0 = kDigammaRootHi + kDigammaRootLo;
    for (int k = 1; k <= kRootTerms; ++k) {
      const double z = HurwitzSeries(k + 1, x0);
      c[k - 1] = k % 2 == 1 ? z : -z;
    }
    return c;
  }();
  return coefficients;
}

// psi(x) for |x - x0| <= kRootWindow.
double DigammaNearRoot(double x) {
  const std::array<double, kRootTerms>& c = RootSeriesCoefficients();
  const double t = (x - kDigammaRootHi) - kDigammaRootLo;  // x - hi is exact
  double p = c[kRootTerms - 1];
  for (int k = kRootTerms - 2; k >= 0; --k) p = p * t + c[k];
  return p * t;
}

// psi(x) for x >= kDigammaAsymptoticStart.
double DigammaAsymptotic(double x) {
  const double z = 1 / (x * x);
  double p = 0;
  for (size_t k = kBernoulliOverIndex.size(); k-- > 0;) p = (p + kBernoulliOverIndex[k]) * z;
  return std::log(x) - 0.5 / x - p;
}

// psi(x) for finite x >= 0.5.
double DigammaAtLeastHalf(double x) {
  constexpr double kLow = kDigammaRootHi - kRootWindow;
  constexpr double kHigh = kDigammaRootHi + kRootWindow;
  if (x < kLow) return DigammaNearRoot(x + 1) - 1 / x;
  if (x <= kHigh) return DigammaNearRoot(x);
  if (x >= kDigammaAsymptoticStart) return DigammaAsymptotic(x);
  // psi(x) = psi(x - m) + sum of 1/(x - i), i = 1..m, with x - m in the window.
  // Each x - i is exact: it keeps x's low bits at a smaller exponent.
  const double m = std::ceil(x - kHigh);
  double sum = 0;
  for (double i = m; i >= 1; --i) sum += 1 / (x - i);
  return DigammaNearRoot(x - m) + sum;
}

// ---------------------------------------------------------------------------
// ErfInv: Giles' single-precision approximation ("Approximating the erfinv
// function", GPU Computing Gems, 2011) as a start, then Halley steps on
// erf(y) = x, or beyond 0.5 Newton steps on erfc, whose residual keeps its
// precision as x approaches 1.

constexpr std::array<double, 9> kErfInvCentral = {2.81022636e-08,  3.43273939e-07, -3.5233877e-06,
                                                  -4.39150654e-06, 0.00021858087,  -0.00125372503,
                                                  -0.00417768164,  0.246640727,    1.50140941};
constexpr std::array<double, 9> kErfInvTail = {-0.000200214257, 0.000100950558, 0.00134934322,
                                               -0.00367342844,  0.00573950773,  -0.0076224613,
                                               0.00943887047,   1.00167406,     2.83297682};
constexpr int kErfInvMaxSteps = 10;

double ErfInvStart(double ax) {
  double w = -std::log((1 - ax) * (1 + ax));
  const std::array<double, 9>* c = &kErfInvCentral;
  if (w < 5) {
    w -= 2.5;
  } else {
    w = std::sqrt(w) - 3;
    c = &kErfInvTail;
  }
  double p = (*c)[0];
  for (size_t i = 1; i < c->size(); ++i) p = p * w + (*c)[i];
  return p * ax;
}

// ---------------------------------------------------------------------------
// BesselI1e: Chebyshev expansions of Cephes' i1e on [0, 8] in z/2 - 2 and on
// (8, inf) in 32/z - 2.

constexpr std::array<double, 29> kI1eSmall = {
    2.77791411276104639959E-18,  -2.11142121435816608115E-17, 1.55363195773620046921E-16,
    -1.10559694773538630805E-15, 7.60068429473540693410E-15,  -5.04218550472791168711E-14,
    3.22379336594557470981E-13,  -1.98397439776494371520E-12, 1.17361862988909016308E-11,
    -6.66348972350202774223E-11, 3.62559028155211703701E-10,  -1.88724975172282928790E-9,
    9.38153738649577178388E-9,   -4.44505912879632808065E-8,  2.00329475355213526229E-7,
    -8.56872026469545474066E-7,  3.47025130813767847674E-6,   -1.32731636560394358279E-5,
    4.78156510755005422638E-5,   -1.61760815825896745588E-4,  5.12285956168575772895E-4,
    -1.51357245063125314899E-3,  4.15642294431288815669E-3,   -1.05640848946261981558E-2,
    2.47264490306265168283E-2,   -5.29459812080949914269E-2,  1.02643658689847095384E-1,
    -1.76416518357834055153E-1,  2.52587186443633654823E-1};
constexpr std::array<double, 25> kI1eLarge = {
    7.51729631084210481353E-18,  4.41434832307170791151E-18,  -4.65030536848935832153E-17,
    -3.20952592199342395980E-17, 2.96262899764595013876E-16,  3.30820231092092828324E-16,
    -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
    4.27244001671195135429E-14,  -2.10154184277266431302E-14, -4.08355111109219731823E-13,
    -7.19855177624590851209E-13, 2.03562854414708950722E-12,  1.41258074366137813316E-11,
    3.25260358301548823856E-11,  -1.89749581235054123450E-11, -5.58974346219658380687E-10,
    -3.83538038596423702205E-9,  -2.63146884688951950684E-8,  -2.51223623787020892529E-7,
    -3.88256480887769039346E-6,  -1.10588938762623716291E-4,  -9.76109749136146840777E-3,
    7.78576235018280120474E-1};

// Clenshaw's recurrence for sum c[i] T_i(x / 2), highest order first.
template <size_t N>
double Chebyshev(double x, const std::array<double, N>& c) {
  double b0 = c[0], b1 = 0, b2 = 0;
  for (size_t i = 1; i < N; ++i) {
    b2 = b1;
    b1 = b0;
    b0 = x * b1 - b2 + c[i];
  }
  return 0.5 * (b0 - b2);
}

// ---------------------------------------------------------------------------
// Complex inverse functions. AsinAcosKernel(z) = sqrt(a^2 - x^2) +
// i log(a + sqrt(a^2 - 1)) with x = |Re z|, y = |Im z| and
// a = (hypot(x + 1, y) + hypot(x - 1, y)) / 2, evaluated region by region as
// in Hull, Fairgrieve and Tang, "Implementing the complex arcsine and
// arccosine functions using exception handling" (TOMS 1997), with the reduced
// set of regions of XLA's chlo._asin_acos_kernel.

const double kSafeMin = std::sqrt(std::numeric_limits<double>::min()) * 4;
const double kSafeMax = std::sqrt(std::numeric_limits<double>::max()) / 8;

// The quantities both parts of the kernel are built from.
struct KernelTerms {
  explicit KernelTerms(c128 z)
      : x(std::fabs(z.real())),
        y(std::fabs(z.imag())),
        xp1(x + 1),
        xm1(x - 1),
        r(std::hypot(xp1, y)),
        s(std::hypot(xm1, y)),
        a(0.5 * (r + s)),
        yy(y * y),
        rpxp1(r + xp1),
        spxm1(s + xm1),
        smxm1(s - xm1) {}
  double x, y, xp1, xm1, r, s, a, yy, rpxp1, spxm1, smxm1;
};

// sqrt(a^2 - x^2) without cancellation.
double KernelReal(const KernelTerms& t) {
  const double half_apx = 0.5 * (t.a + t.x);
  if (std::max(t.x, t.y) >= kSafeMax) return t.y;
  if (t.x <= 1) return std::sqrt(half_apx * (t.yy / t.rpxp1 + t.smxm1));
  return t.y * std::sqrt(half_apx / t.rpxp1 + half_apx / t.spxm1);
}

// log(a + sqrt(a^2 - 1)) = log1p(am1 + sqrt(am1 * (a + 1))), am1 = a - 1
// formed without cancellation; asymptotic forms where squares overflow.
double KernelImag(const KernelTerms& t) {
  const double safe_max_opt = t.x < kSafeMax * 1e12 ? kSafeMax * 1e-6 : kSafeMax * 1e2;
  const bool y_large = t.y >= safe_max_opt;
  const double mx = y_large ? t.y : t.x;
  if (mx >= (y_large ? safe_max_opt : kSafeMax)) {
    const double xoy = y_large && t.y != kInf ? t.x / t.y : 0;
    return std::log(2.0) + std::log(mx) + 0.5 * std::log1p(xoy * xoy);
  }
  const bool tiny_y = t.y < kSafeMin && t.x < 1;
  const double ap1 = t.a + 1;
  double am1;
  if (tiny_y) {
    am1 = -(t.xp1 * t.xm1) / ap1;
  } else if (t.x >= 1) {
    am1 = 0.5 * t.yy / t.rpxp1 + 0.5 * t.spxm1;
  } else if (t.a <= 1.5) {
    am1 = 0.5 * t.yy / t.rpxp1 + 0.5 * t.yy / t.smxm1;
  } else {
    am1 = t.a - 1;
  }
  const double sq = std::sqrt(am1 * ap1);
  return tiny_y ? t.y / sq : std::log1p(am1 + sq);
}

}  // namespace

c128 AsinAcosKernel(c128 z) {
  const KernelTerms t(z);
  return {KernelReal(t), KernelImag(t)};
}

double Lgamma(double x) {
  int sign;
  return lgamma_r(x, &sign);  // +inf at the poles and at +-inf, as XLA
}

double Digamma(double x) {
  if (std::isnan(x)) return x;
  if (x <= 0 && IsInteger(x)) return kNaN;  // the poles, -inf included
  if (x == kInf) return kInf;
  if (x >= 0.5) return DigammaAtLeastHalf(x);
  // Reflection: psi(x) = psi(1 - x) - pi cot(pi x). cot has period 1, so
  // reduce to r in [-1/2, 1/2] first; pi * r is then accurate.
  const double r = x - std::round(x);
  const double cot = std::fabs(r) == 0.5 ? 0 : 1 / std::tan(kPi * r);
  return DigammaAtLeastHalf(1 - x) - kPi * cot;
}

double Polygamma(double n, double x) {
  if (!std::isfinite(n) || n < 0 || !IsInteger(n)) return kNaN;
  if (n == 0) return Digamma(x);
  // psi^(n)(x) = (-1)^(n+1) n! zeta(n+1, x)
  const double sign = std::fmod(n, 2) == 1 ? 1 : -1;
  return sign * std::tgamma(n + 1) * Zeta(n + 1, x);
}

double Zeta(double x, double q) {
  if (x == 1) return kInf;  // the harmonic series
  if (std::isnan(x) || std::isnan(q) || x < 1) return kNaN;
  if (q <= 0) {
    if (!IsInteger(x)) return kNaN;  // (q + k)^-x is not real
    if (IsInteger(q)) return std::fmod(x, 2) == 0 ? kInf : kNaN;
  }
  if (x == kInf && q > 0) return q > 1 ? 0 : q == 1 ? 1 : kInf;  // the first term
  return HurwitzSeries(x, q);
}

double ErfInv(double x) {
  const double ax = std::fabs(x);
  if (std::isnan(x) || ax > 1) return kNaN;
  if (ax == 1) return std::copysign(kInf, x);
  if (ax == 0) return x;
  constexpr double kTwoOverSqrtPi = std::numbers::inv_sqrtpi * 2;
  double y = ErfInvStart(ax);
  for (int i = 0; i < kErfInvMaxSteps; ++i) {
    const double slope = kTwoOverSqrtPi * std::exp(-y * y);  // erf'(y)
    double dy;
    if (ax <= 0.5) {
      const double d = (std::erf(y) - ax) / slope;
      dy = d / (1 + y * d);  // Halley's step: erf''/erf' = -2y
    } else {
      // Newton's step on log(erfc(y)) = log(1 - ax), nearly quadratic in y,
      // which converges quickly from a rough start deep in the tail.
      const double r = std::erfc(y);
      dy = -std::log(r / (1 - ax)) * r / slope;
    }
    y -= dy;
    if (std::fabs(dy) <= kEps * y) break;
  }
  return std::copysign(y, x);
}

double BesselI1e(double x) {
  const double z = std::fabs(x);
  const double r = z <= 8 ? Chebyshev(0.5 * z - 2, kI1eSmall) * z
                          : Chebyshev(32 / z - 2, kI1eLarge) / std::sqrt(z);
  return x < 0 ? -r : r;
}

c128 Asin(c128 z) {
  const c128 w = AsinAcosKernel(z);
  return {std::atan2(z.real(), w.real()), z.imag() < 0 ? -w.imag() : w.imag()};
}

c128 Acos(c128 z) {
  const c128 w = AsinAcosKernel(z);
  return {std::atan2(w.real(), z.real()), z.imag() < 0 ? w.imag() : -w.imag()};
}

c128 Asinh(c128 z) {
  // asinh(z) = -i asin(i z)
  const c128 w = AsinAcosKernel({-z.imag(), z.real()});
  return {z.real() < 0 ? -w.imag() : w.imag(), std::atan2(z.imag(), w.real())};
}

c128 Acosh(c128 z) {
  // acosh(z) = +-i acos(z), the sign making the real part non-negative.
  const c128 w = AsinAcosKernel(z);
  const double im = std::atan2(w.real(), z.real());
  return {w.imag(), z.imag() < 0 ? -im : im};
}

c128 Atanh(c128 z) {
  // atanh(z) = (log1p(z) - log1p(-z)) / 2, with
  //   Re = sign(x) log1p(4|x| / ((|x| - 1)^2 + y^2)) / 4,
  //   Im = atan2(2y, (1 - |x|)(1 + |x|) - y^2) / 2,
  // and limits where the squares would overflow.
  const double x = z.real(), y = z.imag();
  const double ax = std::fabs(x), ay = std::fabs(y);
  constexpr double kInvNegEps = 9007199254740994.0;  // 1 / (1 - nextafter(1, 0)) + 2
  constexpr double kLarge = kInvNegEps * kInvNegEps;
  const bool safe = ax < kLarge && ay < kLarge;
  const double naxm1 = 1 - ax, y2 = y * y;
  double q;  // Re = sign(x) log1p(4 q) / 4
  if (safe) {
    q = ax / (naxm1 * naxm1 + y2);
  } else if (ay * kInvNegEps < ax) {
    q = 1 / ax;
  } else if (std::isinf(x) || std::isinf(y)) {
    q = 0;
  } else {
    q = 1 / (ax / y + y / ax) / y;
  }
  const double re = (x >= 0 ? 1 : -1) * std::log1p(4 * q) * 0.25;
  const double im =
      safe ? std::atan2(y + y, naxm1 * (1 + ax) - y2) * 0.5 : (y >= 0 ? 1 : -1) * kPi * 0.5;
  return {re, im};
}

c128 Atan(c128 z) {
  // atan(z) = -i atanh(i z)
  const c128 w = Atanh({-z.imag(), z.real()});
  return {w.imag(), -w.real()};
}

}  // namespace tpusim::ops::special

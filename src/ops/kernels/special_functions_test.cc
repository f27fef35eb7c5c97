#include "ops/kernels/special_functions.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace tpusim::ops::special {
namespace {

using c128 = std::complex<double>;
constexpr double kInf = std::numeric_limits<double>::infinity();

// Distance in units in the last place between two finite doubles.
int64_t Ulps(double a, double b) {
  auto ordered = [](double v) {
    const int64_t i = std::bit_cast<int64_t>(v);
    return i < 0 ? std::numeric_limits<int64_t>::min() - i : i;
  };
  const int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

// Expected values below were computed with 60-digit decimal arithmetic
// (Stirling / Euler-Maclaurin series with exact Bernoulli numbers) and
// rounded to double.
struct Case1 {
  double x, want;
};
struct Case2 {
  double a, b, want;
};

TEST(SpecialFunctionsTest, Lgamma) {
  const Case1 cases[] = {
      {0.5, 0.5723649429247001},
      {1.0000009536743164, -5.504750066148867e-07},
      {0.999, 0.0005780385328913802},
      {1.5, -0.12078223763524522},
      {1.999999999, -4.227843697573328e-10},
      {2.5, 0.2846828704729192},
      {7.25, 7.0521854507385395},
      {150.5, 602.5139548705854},
      {100000.0, 1051287.7089736569},
  };
  for (const Case1& c : cases) EXPECT_LE(Ulps(Lgamma(c.x), c.want), 4) << c.x;
  EXPECT_EQ(Lgamma(1), 0);
  EXPECT_EQ(Lgamma(0), kInf);
  EXPECT_EQ(Lgamma(-0.0), kInf);
  EXPECT_EQ(Lgamma(-3), kInf);
  EXPECT_EQ(Lgamma(-kInf), kInf);
  EXPECT_EQ(Lgamma(kInf), kInf);
  EXPECT_TRUE(std::isnan(Lgamma(NAN)));
  // log|Gamma(-0.5)| = log(2 sqrt(pi))
  EXPECT_LE(Ulps(Lgamma(-0.5), std::log(2 * std::sqrt(M_PI))), 4);
}

TEST(SpecialFunctionsTest, DigammaIsAccurateIncludingNearItsRoot) {
  const Case1 cases[] = {
      {0.5, -1.9635100260214235},
      {0.75, -1.0858608797864722},
      {1.0, -0.5772156649015329},
      {1.25, -0.22745353337626542},
      {1.4616321449683622, -9.241265521729427e-17},
      {1.46163214496, -8.091961090816214e-12},
      {1.5, 0.03648997397857652},
      {1.9, 0.35618416116405965},
      {2.0, 0.42278433509846713},
      {3.7, 1.1671535393615113},
      {9.99, 2.250700372831201},
      {10.0, 2.251752589066721},
      {57.5, 4.04306409160271},
      {1000000.0, 13.815510057964191},
  };
  for (const Case1& c : cases) EXPECT_LE(Ulps(Digamma(c.x), c.want), 4) << c.x;
}

TEST(SpecialFunctionsTest, DigammaReflectsAndHasNanPoles) {
  // psi(1 - x) - psi(x) = pi cot(pi x)
  for (double x : {-0.25, -1.75, -10.3, 0.3}) {
    const double want = Digamma(1 - x) - M_PI / std::tan(M_PI * x);
    EXPECT_NEAR(Digamma(x), want, 1e-13 * std::fabs(want)) << x;
  }
  EXPECT_NEAR(Digamma(-0.5), 0.03648997397857652, 1e-15);  // = psi(1.5)
  for (double pole : {0.0, -0.0, -1.0, -7.0, -kInf}) {
    EXPECT_TRUE(std::isnan(Digamma(pole))) << pole;
  }
  EXPECT_EQ(Digamma(kInf), kInf);
}

TEST(SpecialFunctionsTest, Zeta) {
  const Case2 cases[] = {
      {2.0, 1.0, 1.6449340668482264},     {3.0, 1.0, 1.2020569031595942},
      {2.0, 0.5, 4.934802200544679},      {4.5, 2.25, 0.03366018867627801},
      {1.5, 1.0, 2.612375348685488},      {10.0, 3.0, 1.8012627818085337e-05},
      {2.0, 100.0, 0.010050166663333571}, {3.0, -2.5, 0.0541020258208637},
      {1.0001, 1.0, 10000.577222947539},
  };
  for (const Case2& c : cases) EXPECT_LE(Ulps(Zeta(c.a, c.b), c.want), 8) << c.a << " " << c.b;
}

TEST(SpecialFunctionsTest, ZetaDomain) {
  EXPECT_EQ(Zeta(1, 3), kInf);
  EXPECT_EQ(Zeta(1, -2), kInf);  // x == 1 wins over the pole
  EXPECT_TRUE(std::isnan(Zeta(0.5, 1)));
  EXPECT_TRUE(std::isnan(Zeta(2.5, -0.5)));  // q <= 0 needs an integer x
  EXPECT_EQ(Zeta(2, 0), kInf);               // pole, even x
  EXPECT_TRUE(std::isnan(Zeta(3, -1)));      // pole, odd x
  EXPECT_EQ(Zeta(kInf, 2), 0);
  EXPECT_EQ(Zeta(kInf, 1), 1);
  EXPECT_TRUE(std::isnan(Zeta(NAN, 2)));
  EXPECT_EQ(Zeta(1100, 0.5), kInf);              // 0.5^-1100 overflows
  EXPECT_TRUE(std::isnan(Zeta(2, -4194304.5)));  // too far below zero to sum
}

TEST(SpecialFunctionsTest, Polygamma) {
  const Case2 cases[] = {
      {1.0, 1.0, 1.6449340668482264},      {1.0, 0.25, 17.19732915450711},
      {2.0, 3.5, -0.1082040516417274},     {3.0, 1.5, 1.4090910340024372},
      {4.0, 10.0, -0.0007299311682352867}, {1.0, -1.5, 9.379246644989124},
  };
  for (const Case2& c : cases) {
    EXPECT_LE(Ulps(Polygamma(c.a, c.b), c.want), 8) << c.a << " " << c.b;
  }
  EXPECT_EQ(Polygamma(0, 2.5), Digamma(2.5));
  EXPECT_TRUE(std::isnan(Polygamma(1.5, 2)));
  EXPECT_TRUE(std::isnan(Polygamma(-1, 2)));
  EXPECT_TRUE(std::isnan(Polygamma(kInf, 2)));
}

TEST(SpecialFunctionsTest, ErfInvInvertsErf) {
  // Reference values: PyTorch's float64 erfinv below 0.9; beyond, where it
  // loses accuracy, Newton's method on an 80-digit erf.
  const Case1 cases[] = {
      {1e-300, 8.86226925452758e-301},     {1e-10, 8.862269254527581e-11},
      {0.1, 0.08885599049425769},          {0.5, 0.4769362762044699},
      {0.9, 1.1630871536766743},           {0.999, 2.3267537655135246},
      {0.999999999999, 5.042031898572696}, {0.9999999999999999, 5.8635847487551676},
      {-0.3, -0.2724627147267544},
  };
  for (const Case1& c : cases) EXPECT_LE(Ulps(ErfInv(c.x), c.want), 2) << c.x;
  EXPECT_EQ(ErfInv(1), kInf);
  EXPECT_EQ(ErfInv(-1), -kInf);
  EXPECT_TRUE(std::signbit(ErfInv(-0.0)));
  EXPECT_TRUE(std::isnan(ErfInv(1.5)));
  EXPECT_TRUE(std::isnan(ErfInv(NAN)));
}

TEST(SpecialFunctionsTest, BesselI1e) {
  // Reference values: the power series of I1 in 60-digit arithmetic; for the
  // largest two PyTorch's float64 i1e.
  const Case1 cases[] = {
      {1e-05, 4.999950000312499e-06},  {0.5, 0.1564208031848717},   {3.0, 0.19682671329730086},
      {8.0, 0.13414249329269817},      {8.5, 0.13054935509459586},  {50.0, 0.0559931238928954},
      {10000.0, 0.003989273195983662}, {-2.0, -0.2152692892489377},
  };
  for (const Case1& c : cases) EXPECT_LE(Ulps(BesselI1e(c.x), c.want), 4) << c.x;
  EXPECT_EQ(BesselI1e(0), 0);
  EXPECT_EQ(BesselI1e(kInf), 0);
}

// Complex inverse functions against the C library away from the branch
// cuts, and on the cuts against XLA's sign conventions.
TEST(SpecialFunctionsTest, ComplexInverseFunctionsMatchTheCLibrary) {
  const c128 points[] = {{0.5, 0.25},   {-2, 3},      {1e-20, 1},    {3, -1e-10},
                         {-0.9, -2e-8}, {1e10, 1e-3}, {0.25, 1e200}, {-7, 7}};
  auto close = [](c128 got, c128 want) { return std::abs(got - want) <= 1e-14 * std::abs(want); };
  for (c128 z : points) {
    EXPECT_PRED2(close, Asin(z), std::asin(z)) << z;
    EXPECT_PRED2(close, Acos(z), std::acos(z)) << z;
    EXPECT_PRED2(close, Asinh(z), std::asinh(z)) << z;
    EXPECT_PRED2(close, Acosh(z), std::acosh(z)) << z;
    EXPECT_PRED2(close, Atanh(z), std::atanh(z)) << z;
    EXPECT_PRED2(close, Atan(z), std::atan(z)) << z;
  }
}

TEST(SpecialFunctionsTest, ComplexInverseFunctionsOnTheCuts) {
  // asin(2 + 0i) = pi/2 + i log(2 + sqrt(3)); a -0 imaginary part is treated
  // as +0 (XLA selects on imag < 0).
  const double log_2_sqrt3 = std::log(2 + std::sqrt(3.0));
  EXPECT_LE(Ulps(Asin({2, 0}).real(), M_PI / 2), 1);
  EXPECT_LE(Ulps(Asin({2, 0}).imag(), log_2_sqrt3), 2);
  EXPECT_LE(Ulps(Asin({2, -0.0}).imag(), log_2_sqrt3), 2);
  EXPECT_LE(Ulps(Acosh({-2, 0}).imag(), M_PI), 1);
  EXPECT_LE(Ulps(Acosh({0.5, 0}).imag(), std::acos(0.5)), 1);
  EXPECT_EQ(Acosh({0.5, 0}).real(), 0);
  // The imaginary part of asin keeps full relative accuracy for tiny y.
  EXPECT_LE(Ulps(Asin({0.5, 1e-300}).imag(), 1e-300 / std::sqrt(0.75)), 2);
}

}  // namespace
}  // namespace tpusim::ops::special

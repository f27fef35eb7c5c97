#include "tpusim/timing/timing.h"

#include <gtest/gtest.h>

#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::timing {
namespace {

std::unique_ptr<ir::Module> Parse(const std::string& text) {
  auto m = frontend::ParseStableHlo(text, "t.mlir");
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  if (!m.ok()) return nullptr;
  EXPECT_TRUE(verify::VerifyModule(**m).ok());
  return std::move(m).value();
}

// The loop JAX emits for fori_loop(0, trips, ...), with a multiply in its body.
std::string ForiLoop(const std::string& init, const std::string& dir, const std::string& bound,
                     const std::string& step) {
  return R"(
func.func public @main(%arg0: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %c = stablehlo.constant dense<)" + init + R"(> : tensor<i32>
  %0:2 = stablehlo.while(%iterArg = %c, %iterArg_0 = %arg0) : tensor<i32>, tensor<256x256xf32>
   cond {
    %c_1 = stablehlo.constant dense<)" + bound + R"(> : tensor<i32>
    %1 = stablehlo.compare  )" + dir + R"(, %iterArg, %c_1,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %c_1 = stablehlo.constant dense<)" + step + R"(> : tensor<i32>
    %1 = stablehlo.add %iterArg, %c_1 : tensor<i32>
    %2 = stablehlo.multiply %iterArg_0, %iterArg_0 : tensor<256x256xf32>
    stablehlo.return %1, %2 : tensor<i32>, tensor<256x256xf32>
  }
  return %0#1 : tensor<256x256xf32>
}
)";
}

const ir::Operation* FindOp(const ir::Module& m, const std::string& name) {
  for (const auto& op : m.Lookup("main")->entry().ops()) {
    if (op->name_str() == name) return op.get();
  }
  return nullptr;
}

TEST(InferTripCountTest, CountedLoops) {
  struct Case {
    const char *init, *dir, *bound, *step;
    std::optional<int64_t> trips;
  };
  const Case cases[] = {{"0", "LT", "10", "1", 10},  {"0", "LE", "10", "1", 11},
                        {"3", "LT", "10", "2", 4},   {"10", "GT", "0", "-1", 10},
                        {"10", "GE", "0", "-3", 4},  {"0", "NE", "12", "3", 4},
                        {"5", "LT", "5", "1", 0},    {"0", "LT", "10", "-1", std::nullopt},
                        {"0", "NE", "10", "3", std::nullopt}};
  for (const Case& c : cases) {
    auto m = Parse(ForiLoop(c.init, c.dir, c.bound, c.step));
    ASSERT_NE(m, nullptr);
    const ir::Operation* w = FindOp(*m, "stablehlo.while");
    ASSERT_NE(w, nullptr);
    EXPECT_EQ(InferTripCount(*w), c.trips)
        << "i = " << c.init << "; i " << c.dir << " " << c.bound << "; i += " << c.step;
  }
}

TEST(TimingTest, StaticAndObservedTimesAgreeOnCountedLoops) {
  auto m = Parse(ForiLoop("0", "LT", "7", "1"));
  ASSERT_NE(m, nullptr);
  hw::ChipSpec chip = *hw::FindPreset("v5e");
  auto statically = TimeStatically(*m, "main", chip, {});
  ASSERT_TRUE(statically.ok()) << statically.status().ToString();
  Timeline observed(chip);
  TimingObserver observer(&observed, {});
  exec::Interpreter interp(*m, {});
  interp.set_observer(&observer);
  auto arg = Tensor::Allocate(ir::Type::Tensor(ir::ElementType::kF32, {256, 256}));
  ASSERT_TRUE(arg.ok());
  std::vector<Tensor> args{*arg};
  ASSERT_TRUE(interp.Run("main", args).ok());
  EXPECT_GT(observed.total_seconds(), 0);
  EXPECT_NEAR(statically->total_seconds(), observed.total_seconds(),
              1e-9 * observed.total_seconds());
  int64_t multiplies = 0;
  for (const OpEvent& e : observed.events()) {
    if (e.op->name_str() == "stablehlo.multiply") multiplies += e.count;
  }
  EXPECT_EQ(multiplies, 7);  // one event per iteration
  ASSERT_FALSE(statically->notes().empty());
  EXPECT_NE(statically->notes()[0].find("7 iterations inferred"), std::string::npos);
}

TEST(TimingTest, UncountableLoopNeedsATripCount) {
  // The bound is a parameter, so nothing can be inferred from shapes alone.
  auto m = Parse(R"(
func.func public @main(%n: tensor<i32>) -> tensor<i32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0 = stablehlo.while(%i = %c) : tensor<i32>
   cond {
    %1 = stablehlo.compare  LT, %i, %n,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %c_1 = stablehlo.constant dense<1> : tensor<i32>
    %1 = stablehlo.add %i, %c_1 : tensor<i32>
    stablehlo.return %1 : tensor<i32>
  }
  return %0 : tensor<i32>
}
)");
  ASSERT_NE(m, nullptr);
  hw::ChipSpec chip = *hw::FindPreset("v4");
  auto t = TimeStatically(*m, "main", chip, {});
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(t.status().message().find("t.mlir:4:"), std::string::npos) << t.status().message();
  EXPECT_NE(t.status().message().find("--trip-count"), std::string::npos);
  auto given = TimeStatically(*m, "main", chip, {.default_trip_count = 5});
  ASSERT_TRUE(given.ok());
  EXPECT_NE(given->notes()[0].find("trip count 5 as given"), std::string::npos);
}

TEST(TimingTest, TimingOnlyTakesTheCostliestBranch) {
  auto m = Parse(R"(
func.func public @main(%p: tensor<i1>, %x: tensor<512x512xf32>) -> tensor<512x512xf32> {
  %0 = "stablehlo.if"(%p) ({
    stablehlo.return %x : tensor<512x512xf32>
  }, {
    %1 = stablehlo.dot_general %x, %x, contracting_dims = [1] x [0] : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    stablehlo.return %1 : tensor<512x512xf32>
  }) : (tensor<i1>) -> tensor<512x512xf32>
  return %0 : tensor<512x512xf32>
}
)");
  ASSERT_NE(m, nullptr);
  auto t = TimeStatically(*m, "main", *hw::FindPreset("v5e"), {});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  bool timed_dot = false;
  for (const OpEvent& e : t->events()) timed_dot |= e.op->name_str() == "stablehlo.dot_general";
  EXPECT_TRUE(timed_dot);
  ASSERT_EQ(t->notes().size(), 1u);
  EXPECT_NE(t->notes()[0].find("timed branch 1 of 2"), std::string::npos) << t->notes()[0];
}

TEST(TimingTest, PrecisionOverrideChangesMatmulPasses) {
  auto m = Parse(R"(
func.func public @main(%x: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %0 = stablehlo.dot_general %x, %x, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  return %0 : tensor<1024x1024xf32>
}
)");
  ASSERT_NE(m, nullptr);
  hw::ChipSpec chip = *hw::FindPreset("v5e");
  const ir::Operation& dot = *FindOp(*m, "stablehlo.dot_general");
  bool priced;
  ops::EvalOptions highest{.override_precision = true,
                           .precision = numerics::MatmulPrecision::kHighest};
  hw::OpCost one = PriceOp(chip, dot, {}, nullptr, &priced);
  ASSERT_TRUE(priced);
  hw::OpCost six = PriceOp(chip, dot, highest, nullptr, &priced);
  EXPECT_EQ(six.mxu_cycles, 6 * one.mxu_cycles);
  const int mxu = static_cast<int>(hw::Unit::kMxu);
  EXPECT_NEAR(six.unit_seconds[mxu], 6 * one.unit_seconds[mxu], 1e-15);
  EXPECT_GT(six.seconds, 3 * one.seconds);  // six passes outweigh 12 MiB of f32
  EXPECT_EQ(six.bound, hw::Bound::kMxu);
  EXPECT_EQ(one.flops, 2LL * 1024 * 1024 * 1024);
}

}  // namespace
}  // namespace tpusim::timing

#include "tpusim/hw/chip.h"

#include <gtest/gtest.h>

namespace tpusim::hw {
namespace {

TEST(ChipTest, PresetsReproduceTheirPublishedPeak) {
  ASSERT_EQ(Presets().size(), 7u);
  for (const ChipSpec& c : Presets()) {
    SCOPED_TRACE(c.name);
    EXPECT_TRUE(Validate(c).ok());
    ASSERT_GT(c.published_bf16_flops, 0);
    EXPECT_NEAR(c.PeakBf16FlopsPerS() / c.published_bf16_flops, 1.0, 0.01);
    EXPECT_FALSE(c.sources.empty());
  }
}

TEST(ChipTest, FindPresetByNameAndAlias) {
  EXPECT_EQ(FindPreset("v5e")->name, "v5e");
  EXPECT_EQ(FindPreset("V5P")->name, "v5p");
  EXPECT_EQ(FindPreset("tpu7x")->name, "7x");
  auto missing = FindPreset("v9");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("v5e"), std::string::npos);
}

TEST(ChipTest, CoreDevicesHaveTheirShareOfHbm) {
  const ChipSpec v2 = *FindPreset("v2"), v3 = *FindPreset("v3"), v7x = *FindPreset("7x");
  EXPECT_EQ(v2.HbmBytesPerDevice(), v2.memory.hbm_bytes / 2);
  EXPECT_EQ(v3.HbmBytesPerDevice(), v3.memory.hbm_bytes / 2);
  EXPECT_EQ(v7x.HbmBytesPerDevice(), int64_t{96} << 30);
  EXPECT_DOUBLE_EQ(v7x.HbmPeakBytesPerSPerDevice(), 3690e9);
  // 7x's measured 8 GiB copy: 3210 GB/s on one core.
  EXPECT_NEAR(v7x.HbmBytesPerSPerDevice(), 3210e9, 1e6);
  for (const char* megacore : {"v4", "v5p"}) {
    const ChipSpec c = *FindPreset(megacore);
    EXPECT_EQ(c.HbmBytesPerDevice(), c.memory.hbm_bytes) << megacore;
  }
  const ChipSpec v5e = *FindPreset("v5e");
  EXPECT_DOUBLE_EQ(v5e.HbmBytesPerSPerDevice(), v5e.memory.hbm_bytes_per_s);  // no measurement
}

TEST(ChipTest, HbmSustainedFractionIsCheckedAndKept) {
  auto c = LoadChipToml("base = \"v6e\"\n[memory]\nhbm_sustained_fraction = 0.5\n", "c.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_DOUBLE_EQ(c->HbmBytesPerSPerDevice(), 0.5 * 1638e9);
  auto bad = LoadChipToml("base = \"v6e\"\n[memory]\nhbm_sustained_fraction = 1.5\n", "c.toml");
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("hbm_sustained_fraction"), std::string::npos);
}

TEST(ChipTest, TomlRoundTripsEveryPreset) {
  for (const ChipSpec& c : Presets()) {
    auto back = LoadChipToml(DumpChipToml(c), c.name + ".toml");
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(DumpChipToml(*back), DumpChipToml(c));
    // Exactly, in the shortest text that reads back.
    EXPECT_EQ(back->op_overhead_s, c.op_overhead_s);
    EXPECT_EQ(back->mxu.sustained_fraction, c.mxu.sustained_fraction);
  }
  EXPECT_NE(DumpChipToml(*FindPreset("v5e")).find("\nop_overhead_s = 3.5e-07  #"), std::string::npos);
}

TEST(ChipTest, TomlChangesAPresetCopy) {
  auto c = LoadChipToml("base = \"v5e\"\nname = \"big\"\n[mxu]\nrows = 256\ncols = 256\n"
                        "[memory]\nhbm_bytes_per_s = 1.638e12\n", "big.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->mxu.rows, 256);
  EXPECT_EQ(c->mxu.per_core, 4);  // kept from v5e
  EXPECT_DOUBLE_EQ(c->memory.hbm_bytes_per_s, 1.638e12);
  EXPECT_DOUBLE_EQ(c->PeakBf16FlopsPerS(), 4 * FindPreset("v5e")->PeakBf16FlopsPerS());
  // Its description is its own fields', not v5e's "4 MXUs 128x128".
  EXPECT_EQ(c->description, "from v5e: 1 TC x 4 MXUs 256x256, 15.8 GiB HBM");
}

// Every field has a range; an error points at the line that set it and
// prints the value as written.
TEST(ChipTest, TomlValuesOutOfRangeAreLocated) {
  auto zero = LoadChipToml("base = \"v5e\"\nname = \"x\"\n[mxu]\nrows = 0\n", "c.toml");
  EXPECT_EQ(zero.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(zero.status().message(), "c.toml:4:8: mxu.rows must be positive, got 0");
  auto fast = LoadChipToml("base = \"v5e\"\nname = \"x\"\nclock_hz = 1e30\n", "c.toml");
  EXPECT_EQ(fast.status().message(),
            "c.toml:3:12: clock_hz = 1e+30 is implausibly large (at most 1e+11)");
  auto slow = LoadChipToml("base = \"v5e\"\nname = \"x\"\n[host]\nlatency_s = -1\n", "c.toml");
  EXPECT_EQ(slow.status().message(), "c.toml:4:13: host.latency_s must be in [0, 1], got -1");
}

TEST(ChipTest, TomlRejectsUnknownKeysAndImpossibleValues) {
  auto unknown = LoadChipToml("base = \"v5e\"\n[mxu]\nrowz = 3\n", "c.toml");
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("c.toml:3:"), std::string::npos)
      << unknown.status().message();
  EXPECT_NE(unknown.status().message().find("mxu.rowz"), std::string::npos);
  auto negative = LoadChipToml("base = \"v4\"\nclock_hz = -1.0\n", "c.toml");
  EXPECT_EQ(negative.status().code(), StatusCode::kInvalidArgument);
  auto wrong_type = LoadChipToml("base = \"v4\"\nmegacore = 3\n", "c.toml");
  EXPECT_EQ(wrong_type.status().code(), StatusCode::kInvalidArgument);
  auto malformed = LoadChipToml("name = \n", "c.toml");
  EXPECT_EQ(malformed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(malformed.status().message().find("c.toml:1:"), std::string::npos);
  auto bad_dataflow = LoadChipToml("base = \"v4\"\n[mxu]\ndataflow = \"diagonal\"\n", "c.toml");
  EXPECT_EQ(bad_dataflow.status().code(), StatusCode::kInvalidArgument);
}

TEST(ChipTest, TomlSelectsTheScaleSimCycleCount) {
  auto c = LoadChipToml(
      "base = \"v5e\"\n[mxu]\ncycle_model = \"scale_sim\"\n"
      "double_buffered = false\n",
      "c.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->mxu.cycle_model, CycleModel::kScaleSim);
  auto back = LoadChipToml(DumpChipToml(*c), "back.toml");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->mxu.cycle_model, CycleModel::kScaleSim);
  EXPECT_EQ(FindPreset("v5e")->mxu.cycle_model, CycleModel::kRegister);

  // SCALE-Sim has no double buffering to count.
  auto buffered = LoadChipToml("base = \"v5e\"\n[mxu]\ncycle_model = \"scale_sim\"\n", "c.toml");
  EXPECT_EQ(buffered.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(buffered.status().message().find("double_buffered = false"), std::string::npos)
      << buffered.status().message();
  auto unknown = LoadChipToml("base = \"v5e\"\n[mxu]\ncycle_model = \"exact\"\n", "c.toml");
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("c.toml:3:15: 'mxu.cycle_model' must be "
                                            "register | scale_sim, got 'exact'"),
            std::string::npos)
      << unknown.status().message();
}

}  // namespace
}  // namespace tpusim::hw

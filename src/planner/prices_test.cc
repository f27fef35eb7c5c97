#include "tpusim/planner/prices.h"

#include <gtest/gtest.h>

namespace tpusim::planner {
namespace {

constexpr const char* kList = R"(
[v5e]
on_demand = 1.5
spot = 0.5
as_of = "2026-11"
source = "a quote"

[v5p]
on_demand = 4
)";

TEST(Prices, AFileGivesOnDemandAndSpotPrices) {
  auto list = LoadPricesToml(kList, "prices.toml");
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->size(), 2u);
  const ChipHourPrice* v5e = FindPrice(*list, "v5e");
  ASSERT_NE(v5e, nullptr);
  EXPECT_EQ(v5e->as_of, "2026-11");
  EXPECT_EQ(v5e->source, "a quote");
  Pricing on_demand{.list = *list}, spot{.list = *list, .spot = true};
  EXPECT_EQ(on_demand.PerChipHour("v5e"), 1.5);
  EXPECT_EQ(spot.PerChipHour("v5e"), 0.5);
  EXPECT_EQ(spot.PerChipHour("v5p"), 0);          // no spot price recorded
  EXPECT_EQ(spot.PerChipHour("v6e"), 0);          // not in the file
  EXPECT_EQ(Pricing{}.PerChipHour("v5p"), 4.20);  // the built-in list
  EXPECT_EQ(FindPrice("v2"), nullptr);
}

TEST(Prices, BadFilesSayWhereAndWhat) {
  auto unknown = LoadPricesToml("[v5e]\non_demand = 1\nreserved = 2\n", "p.toml");
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("p.toml:3:12: unknown key 'v5e.reserved'"),
            std::string::npos)
      << unknown.status().ToString();
  auto negative = LoadPricesToml("[v5e]\non_demand = -1\n", "p.toml");
  EXPECT_NE(negative.status().message().find("negative price"), std::string::npos);
  auto typed = LoadPricesToml("[v5e]\nspot = \"cheap\"\n", "p.toml");
  EXPECT_NE(typed.status().message().find("p.toml:2:8: 'v5e.spot' has the wrong type"),
            std::string::npos)
      << typed.status().ToString();
  EXPECT_FALSE(LoadPricesToml("v5e = 1\n", "p.toml").ok());
  EXPECT_FALSE(LoadPricesToml("[v5e\n", "p.toml").ok());
}

}  // namespace
}  // namespace tpusim::planner

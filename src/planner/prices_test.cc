#include "tpusim/planner/prices.h"

#include <gtest/gtest.h>

#include <utility>

namespace tpusim::planner {

std::string_view BuiltinPricesToml();  // prices.cc

namespace {

constexpr const char* kList = R"(
[v5e]
region = "us-central1"
on_demand = 1.5
spot = 0.5
as_of = "2026-11"
source = "a quote"

[v5e.regions]
us-east5 = { on_demand = 1.5, spot = 0.75 }

[v5p]
on_demand = 4
)";

TEST(Prices, AFileGivesOnDemandAndSpotPricesByRegion) {
  auto list = LoadPricesToml(kList, "prices.toml");
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->size(), 2u);
  const ChipHourPrice* v5e = FindPrice(*list, "v5e");
  ASSERT_NE(v5e, nullptr);
  EXPECT_EQ(v5e->as_of, "2026-11");
  EXPECT_EQ(v5e->source, "a quote");
  ASSERT_EQ(v5e->regions.size(), 2u);
  EXPECT_EQ(v5e->In("")->region, "us-central1");
  EXPECT_EQ(v5e->In("us-east5")->spot_usd, 0.75);
  EXPECT_EQ(v5e->In("europe-west4"), nullptr);
  Pricing on_demand{.list = *list}, spot{.list = *list, .spot = true};
  EXPECT_EQ(on_demand.PerChipHour("v5e"), 1.5);
  EXPECT_EQ(spot.PerChipHour("v5e"), 0.5);
  EXPECT_EQ((Pricing{.list = *list, .spot = true, .region = "us-east5"}.PerChipHour("v5e")), 0.75);
  EXPECT_EQ(on_demand.PerChipHour("v5p"), 4);  // a price without a region
  EXPECT_EQ(spot.PerChipHour("v5p"), 0);       // no spot price recorded
  EXPECT_EQ(spot.PerChipHour("v6e"), 0);       // not in the file
  EXPECT_EQ((Pricing{.list = *list, .region = "us-east5"}.PerChipHour("v5p")), 0);
}

// The built-in list is prices/cloud-tpu.toml: it loads, and prices every
// generation Cloud TPU rents by the chip-hour, spot below on demand.
TEST(Prices, TheBuiltInListPricesEachGenerationOnDemandAndSpot) {
  auto list = LoadPricesToml(BuiltinPricesToml(), "prices/cloud-tpu.toml");
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  EXPECT_EQ(list->size(), BuiltinPrices().size());
  for (const char* gen : {"v3", "v4", "v5e", "v5p", "v6e"}) {
    const ChipHourPrice* p = FindPrice(gen);
    ASSERT_NE(p, nullptr) << gen;
    EXPECT_FALSE(p->as_of.empty()) << gen;
    EXPECT_FALSE(p->source.empty()) << gen;
    for (const RegionPrice& r : p->regions) {
      EXPECT_FALSE(r.region.empty()) << gen;
      EXPECT_GT(r.spot_usd, 0) << gen << " " << r.region;
      EXPECT_LT(r.spot_usd, r.on_demand_usd) << gen << " " << r.region;
    }
  }
  EXPECT_EQ(Pricing{}.PerChipHour("v5p"), 4.20);  // us-central1, the first listed
  EXPECT_EQ((Pricing{.spot = true}.PerChipHour("v5p")), 1.68);
  EXPECT_EQ((Pricing{.spot = true, .region = "us-east5"}.PerChipHour("v6e")), 1.08);
  EXPECT_EQ((Pricing{.region = "us-east5"}.PerChipHour("v4")), 0);  // v4 is in us-central2
  EXPECT_EQ(FindPrice("v2"), nullptr);
  EXPECT_EQ(FindPrice("7x"), nullptr);
}

TEST(Prices, AnUnlistedRegionIsAnErrorNamingTheListedOnes) {
  EXPECT_TRUE((Pricing{.region = "us-east5"}.CheckRegion().ok()));
  EXPECT_TRUE(Pricing{}.CheckRegion().ok());
  Status st = Pricing{.region = "mars-north1"}.CheckRegion();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("no price is recorded in region 'mars-north1'"), std::string::npos);
  EXPECT_NE(st.message().find("us-central2"), std::string::npos) << st.message();
}

TEST(Prices, DescribeNamesThePriceItsRegionAndSource) {
  auto list = LoadPricesToml(kList, "prices.toml");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ((Pricing{.list = *list, .spot = true}.Describe("v5e")),
            "v5e: $0.500 per chip-hour spot in us-central1 (as of 2026-11; a quote)");
  EXPECT_EQ((Pricing{.list = *list, .spot = true}.Describe("v5p")), "v5p: no spot price recorded");
  EXPECT_EQ((Pricing{.list = *list, .region = "us-east5"}.Describe("v5p")),
            "v5p: no on-demand price recorded in us-east5");
}

TEST(Prices, BadFilesSayWhereAndWhat) {
  const std::pair<const char*, const char*> cases[] = {
      {"[v5e]\non_demand = 1\nreserved = 2\n", "p.toml:3:12: unknown key 'v5e.reserved'"},
      {"[v5e]\non_demand = -1\n", "negative price"},
      {"[v5e]\nspot = \"cheap\"\n", "p.toml:2:8: 'v5e.spot' has the wrong type"},
      {"[v5e]\nregions = 3\n", "p.toml:2:11: 'v5e.regions' must be a table"},
      {"[v5e.regions.x]\nspot = 1\nfoo = 1\n", "unknown key 'v5e.regions.x.foo'"},
      {"[v5e.regions]\nx = { spot = -1 }\n", "'v5e.regions.x' has a negative price"},
  };
  for (const auto& [text, message] : cases) {
    auto list = LoadPricesToml(text, "p.toml");
    EXPECT_EQ(list.status().code(), StatusCode::kInvalidArgument) << text;
    EXPECT_NE(list.status().message().find(message), std::string::npos) << list.status().ToString();
  }
  EXPECT_FALSE(LoadPricesToml("[v5e.regions]\nx = 1\n", "p.toml").ok());
  EXPECT_FALSE(LoadPricesToml("v5e = 1\n", "p.toml").ok());
  EXPECT_FALSE(LoadPricesToml("[v5e\n", "p.toml").ok());
}

}  // namespace
}  // namespace tpusim::planner

// What a chip-hour of each generation costs on Cloud TPU, by region, on
// demand and spot, as data with the date and the source it was read from:
// the planner's cost column. Built in (prices/cloud-tpu.toml), or a TOML
// file of the user's own (their discounts, today's spot prices).
#ifndef TPUSIM_PLANNER_PRICES_H_
#define TPUSIM_PLANNER_PRICES_H_

#include <string>
#include <string_view>
#include <vector>

#include "tpusim/base/status.h"

namespace tpusim::planner {

struct RegionPrice {
  std::string region;        // "us-central1"; "" where the list names none
  double on_demand_usd = 0;  // per chip-hour; 0: not recorded
  double spot_usd = 0;       // per chip-hour; 0: not recorded
};

struct ChipHourPrice {
  std::string generation;            // as hw presets name it: "v5p"
  std::vector<RegionPrice> regions;  // the first is the generation's default
  std::string as_of;                 // when the source listed it
  std::string source;

  // The prices in `region` ("": the default region), or nullptr where the
  // list has none there.
  const RegionPrice* In(std::string_view region) const;
};

// The built-in list, prices/cloud-tpu.toml (its comments give the source).
const std::vector<ChipHourPrice>& BuiltinPrices();

// Reads a price list: one table per generation,
//   [v5e]
//   region = "us-central1"   # where on_demand and spot apply (optional)
//   on_demand = 1.20         # dollars per chip-hour
//   spot = 0.60
//   as_of = "2026-11"
//   source = "cloud.google.com/tpu/pricing"
//   [v5e.regions.us-east5]   # further regions, each its own prices
//   on_demand = 1.20
//   spot = 0.60
// Unknown keys, ill-typed or negative prices are errors with file:line:col.
StatusOr<std::vector<ChipHourPrice>> LoadPricesToml(std::string_view text,
                                                    const std::string& filename);

// `generation`'s prices in `list`, or nullptr where none is recorded.
const ChipHourPrice* FindPrice(const std::vector<ChipHourPrice>& list, std::string_view generation);
inline const ChipHourPrice* FindPrice(std::string_view generation) {
  return FindPrice(BuiltinPrices(), generation);
}

// The prices a plan charges: a list (empty: the built-in one), on demand
// or spot, in one region (empty: each generation's default).
struct Pricing {
  std::vector<ChipHourPrice> list;
  bool spot = false;
  std::string region;

  const std::vector<ChipHourPrice>& List() const { return list.empty() ? BuiltinPrices() : list; }
  // Dollars per chip-hour of `generation`; 0 where none is recorded.
  double PerChipHour(std::string_view generation) const;
  // kInvalidArgument when no generation of the list has a price in `region`.
  Status CheckRegion() const;
  const char* Kind() const { return spot ? "spot" : "on demand"; }
  // "spot prices in us-east5", "on demand prices".
  std::string Title() const;
  // One line on `generation`'s price and where it comes from:
  // "v5p: $4.200 per chip-hour spot in us-central1 (as of 2026-11-26; <source>)".
  std::string Describe(std::string_view generation) const;
};

}  // namespace tpusim::planner

#endif  // TPUSIM_PLANNER_PRICES_H_

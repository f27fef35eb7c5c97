// What a chip-hour of each generation costs on Cloud TPU, as data with the
// date and the page it was read from: the planner's cost column. Built in
// (list prices), or a TOML file of the user's own (their region, their
// discounts, today's spot prices).
#ifndef TPUSIM_PLANNER_PRICES_H_
#define TPUSIM_PLANNER_PRICES_H_

#include <string>
#include <string_view>
#include <vector>

#include "tpusim/base/status.h"

namespace tpusim::planner {

struct ChipHourPrice {
  std::string generation;    // as hw presets name it: "v5p"
  double on_demand_usd = 0;  // per chip-hour; 0: not recorded
  double spot_usd = 0;       // per chip-hour; 0: not recorded
  std::string as_of;         // when the source listed it
  std::string source;
};

// The built-in list: on-demand list prices in US regions. v2 and v3 were
// priced per device, 7x not publicly yet; no spot price is recorded (they
// vary by region and day: give them in a file).
const std::vector<ChipHourPrice>& BuiltinPrices();

// Reads a price list: one table per generation,
//   [v5e]
//   on_demand = 1.20   # dollars per chip-hour
//   spot = 0.60
//   as_of = "2026-11"
//   source = "cloud.google.com/tpu/pricing, us-central1"
// Unknown keys, ill-typed or negative prices are errors with file:line:col.
StatusOr<std::vector<ChipHourPrice>> LoadPricesToml(std::string_view text,
                                                    const std::string& filename);

// `generation`'s price in `list`, or nullptr where none is recorded.
const ChipHourPrice* FindPrice(const std::vector<ChipHourPrice>& list, std::string_view generation);
inline const ChipHourPrice* FindPrice(std::string_view generation) {
  return FindPrice(BuiltinPrices(), generation);
}

// The prices a plan charges: a list (empty: the built-in one), on demand
// or spot.
struct Pricing {
  std::vector<ChipHourPrice> list;
  bool spot = false;

  // Dollars per chip-hour of `generation`; 0 where none is recorded.
  double PerChipHour(std::string_view generation) const;
  const char* Kind() const { return spot ? "spot" : "on demand"; }
};

}  // namespace tpusim::planner

#endif  // TPUSIM_PLANNER_PRICES_H_

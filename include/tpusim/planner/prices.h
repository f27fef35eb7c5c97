// What a chip-hour of each generation costs on Cloud TPU, as data with the
// date and the page it was read from: the planner's cost column.
#ifndef TPUSIM_PLANNER_PRICES_H_
#define TPUSIM_PLANNER_PRICES_H_

#include <string_view>

namespace tpusim::planner {

struct ChipHourPrice {
  std::string_view generation;  // as hw presets name it: "v5p"
  double on_demand_usd = 0;     // per chip-hour, us-central1 or the cheapest US region
  double spot_usd = 0;          // 0: not recorded
  std::string_view as_of;       // when the source listed it
  std::string_view source;
};

// The price of `generation`'s chip-hour, or nullptr where none is recorded
// (v2 and v3 were priced per device, 7x not publicly yet).
const ChipHourPrice* FindPrice(std::string_view generation);

}  // namespace tpusim::planner

#endif  // TPUSIM_PLANNER_PRICES_H_

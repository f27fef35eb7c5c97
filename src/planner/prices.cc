#include "tpusim/planner/prices.h"

#include <array>

namespace tpusim::planner {
namespace {

// On-demand list prices per chip-hour in US regions. Spot prices vary by
// region and day and are not recorded yet (0).
constexpr std::string_view kPricing = "cloud.google.com/tpu/pricing";
constexpr std::array kPrices = {
    ChipHourPrice{"v4", 3.22, 0, "2025-01", kPricing},
    ChipHourPrice{"v5e", 1.20, 0, "2025-01", kPricing},
    ChipHourPrice{"v5p", 4.20, 0, "2025-01", kPricing},
    ChipHourPrice{"v6e", 2.70, 0, "2025-01", kPricing},
};

}  // namespace

const ChipHourPrice* FindPrice(std::string_view generation) {
  for (const ChipHourPrice& p : kPrices) {
    if (p.generation == generation) return &p;
  }
  return nullptr;
}

}  // namespace tpusim::planner

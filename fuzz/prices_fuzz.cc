// libFuzzer target: the price list reader (TOML) on arbitrary bytes. Any
// input must give a Status, never a crash, hang or sanitizer report.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tpusim/planner/prices.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto list = tpusim::planner::LoadPricesToml(text, "fuzz.toml");
  if (list.ok()) {
    tpusim::planner::Pricing pricing{.list = *list, .spot = true};
    for (const auto& p : *list) (void)pricing.PerChipHour(p.generation);
  }
  return 0;
}

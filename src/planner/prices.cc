#include "tpusim/planner/prices.h"

#include "base/toml_reader.h"

namespace tpusim::planner {

const std::vector<ChipHourPrice>& BuiltinPrices() {
  static const std::vector<ChipHourPrice> prices = [] {
    const std::string page = "cloud.google.com/tpu/pricing";
    return std::vector<ChipHourPrice>{
        {"v4", 3.22, 0, "2025-01", page},
        {"v5e", 1.20, 0, "2025-01", page},
        {"v5p", 4.20, 0, "2025-01", page},
        {"v6e", 2.70, 0, "2025-01", page},
    };
  }();
  return prices;
}

namespace {

StatusOr<std::vector<ChipHourPrice>> FromTable(const toml::table& root,
                                               const std::string& filename) {
  std::vector<ChipHourPrice> out;
  for (const auto& [key, node] : root) {
    const toml::table* t = node.as_table();
    if (t == nullptr) {
      return InvalidArgument(base::Where(filename, node.source()) + ": '" + std::string(key.str()) +
                             "' must be a table of prices");
    }
    ChipHourPrice p;
    p.generation = std::string(key.str());
    base::TableReader r(*t, filename, p.generation + ".");
    TPUSIM_RETURN_IF_ERROR(r.Read("on_demand", p.on_demand_usd));
    TPUSIM_RETURN_IF_ERROR(r.Read("spot", p.spot_usd));
    TPUSIM_RETURN_IF_ERROR(r.Read("as_of", p.as_of));
    TPUSIM_RETURN_IF_ERROR(r.Read("source", p.source));
    TPUSIM_RETURN_IF_ERROR(r.RejectUnknown());
    if (!(p.on_demand_usd >= 0 && p.spot_usd >= 0)) {
      return InvalidArgument(base::Where(filename, node.source()) + ": '" + p.generation +
                             "' has a negative price");
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

StatusOr<std::vector<ChipHourPrice>> LoadPricesToml(std::string_view text,
                                                    const std::string& filename) {
  try {
    return FromTable(toml::parse(text, filename), filename);
  } catch (const toml::parse_error& e) {
    return InvalidArgument(base::Where(filename, e.source()) + ": " + std::string(e.description()));
  }
}

const ChipHourPrice* FindPrice(const std::vector<ChipHourPrice>& list,
                               std::string_view generation) {
  for (const ChipHourPrice& p : list) {
    if (p.generation == generation) return &p;
  }
  return nullptr;
}

double Pricing::PerChipHour(std::string_view generation) const {
  const ChipHourPrice* p = FindPrice(list.empty() ? BuiltinPrices() : list, generation);
  if (p == nullptr) return 0;
  return spot ? p->spot_usd : p->on_demand_usd;
}

}  // namespace tpusim::planner

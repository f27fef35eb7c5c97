#include "report/fusion_section.h"

#include <sstream>
#include <unordered_map>

#include "tpusim/report/report.h"

namespace tpusim::report {
namespace {

std::string StringAttr(const ir::Operation& op, std::string_view key) {
  ir::Attribute a = op.attr(key);
  return a.kind() == ir::Attribute::Kind::kString ? a.str() : "";
}

// The ops of the kernel's body, terminator left out.
std::vector<std::string> InnerOps(const ir::Operation& fusion) {
  std::vector<std::string> names;
  if (fusion.num_regions() != 1 || fusion.region(0).empty()) return names;
  for (const auto& op : fusion.region(0).front().ops()) {
    if (op.get() == fusion.region(0).front().terminator()) continue;
    std::string n = op->name_str();
    if (n.starts_with("stablehlo.")) n.erase(0, 10);
    names.push_back(std::move(n));
  }
  return names;
}

FusedKernel Describe(const ir::Operation& op) {
  FusedKernel k;
  k.op = &op;
  k.name = StringAttr(op, "name");
  if (k.name.empty()) k.name = "fusion";
  k.kind = StringAttr(op, "kind");
  if (op.num_results() > 0 && !op.result(0).name().empty()) k.value = "%" + op.result(0).name();
  k.ops = InnerOps(op);
  return k;
}

std::string Joined(const std::vector<std::string>& parts) {
  std::string s;
  for (const std::string& p : parts) s += (s.empty() ? "" : ", ") + p;
  return s;
}

}  // namespace

std::vector<FusedKernel> FusedKernels(const timing::Timeline& timeline) {
  std::vector<FusedKernel> kernels;
  std::unordered_map<const ir::Operation*, size_t> index;
  for (const timing::OpEvent& e : timeline.events()) {
    if (e.op->name_str() != "tpusim.fusion") continue;
    auto [it, inserted] = index.emplace(e.op, kernels.size());
    if (inserted) kernels.push_back(Describe(*e.op));
    FusedKernel& k = kernels[it->second];
    k.count += e.count;
    k.seconds += e.seconds();
    k.hbm_bytes += e.cost.hbm_bytes * e.count;
    k.spill_bytes += e.cost.spill_bytes * e.count;
  }
  return kernels;
}

std::string FusionSectionText(const timing::Timeline& timeline) {
  std::vector<FusedKernel> kernels = FusedKernels(timeline);
  if (kernels.empty()) return "";
  std::ostringstream os;
  os << "fused kernels (" << kernels.size() << "):\n";
  for (const FusedKernel& k : kernels) {
    os << "  " << k.name << (k.value.empty() ? "" : " " + k.value) << " (" << k.kind
       << "): " << Joined(k.ops) << "  " << FormatSeconds(k.seconds) << "  "
       << FormatBytes(static_cast<double>(k.hbm_bytes));
    if (k.spill_bytes > 0) {
      os << " (" << FormatBytes(static_cast<double>(k.spill_bytes)) << " spilled)";
    }
    if (k.count > 1) os << "  x" << k.count;
    os << "\n";
  }
  return os.str();
}

nlohmann::json FusionSectionJson(const timing::Timeline& timeline) {
  nlohmann::json out = nlohmann::json::array();
  for (const FusedKernel& k : FusedKernels(timeline)) {
    out.push_back({{"name", k.name},
                   {"value", k.value},
                   {"kind", k.kind},
                   {"ops", k.ops},
                   {"location", k.op->loc().ToString()},
                   {"count", k.count},
                   {"seconds", k.seconds},
                   {"hbm_bytes", k.hbm_bytes},
                   {"spill_bytes", k.spill_bytes}});
  }
  return out;
}

}  // namespace tpusim::report

#include "runtime/slice_setup.h"

#include <algorithm>

#include "tpusim/base/text.h"
#include "tpusim/ir/rewrite.h"
#include "tpusim/ir/sharding.h"
#include "tpusim/report/report.h"

namespace tpusim::runtime {
namespace {

int64_t IntAttr(const ir::Module& module, const char* key) {
  ir::Attribute a = module.attrs().Get(key);
  return a.kind() == ir::Attribute::Kind::kInt && a.int_value() > 0 ? a.int_value() : 1;
}

std::string Wraps(const pod::Topology& t) {
  static const char* kAxis[] = {"x", "y", "z"};
  std::string axes;
  for (int a = 0; a < t.rank(); ++a) {
    if (t.wrap[a]) axes += std::string(axes.empty() ? "" : ",") + kAxis[a];
  }
  return axes.empty() ? "no wraparound" : "wraps " + axes;
}

}  // namespace

StatusOr<std::optional<pod::Slice>> SelectSlice(const RunOptions& options,
                                                const hw::ChipSpec& chip) {
  if (!options.slice.empty()) {
    TPUSIM_ASSIGN_OR_RETURN(pod::Slice s, pod::FindSlice(options.slice));
    return std::optional<pod::Slice>(std::move(s));
  }
  if (!options.topology.empty()) {
    TPUSIM_ASSIGN_OR_RETURN(pod::Slice s, pod::MakeSlice(chip, options.topology));
    return std::optional<pod::Slice>(std::move(s));
  }
  return std::optional<pod::Slice>();
}

ProcessGrid GridOf(const ir::Module& module) {
  return {IntAttr(module, "mhlo.num_replicas"), IntAttr(module, "mhlo.num_partitions")};
}

namespace {

// One more than the highest device `s` places data on; 0 for none.
int64_t DevicesNamed(const ir::HloSharding& s) {
  int64_t n = 0;
  if (s.kind == ir::HloSharding::Kind::kMaximal) n = s.device + 1;
  for (int64_t d : s.devices) n = std::max(n, d + 1);
  for (const ir::HloSharding& e : s.elements) n = std::max(n, DevicesNamed(e));
  return n;
}

int64_t DevicesNamed(const ir::AttributeMap& attrs) {
  ir::Attribute a = attrs.Get("mhlo.sharding");
  if (a.kind() != ir::Attribute::Kind::kString) return 0;
  StatusOr<ir::HloSharding> s = ir::ParseHloSharding(a.str());
  return s.ok() ? DevicesNamed(*s) : 0;
}

}  // namespace

void InferPartitionCount(ir::Module& module) {
  if (module.attrs().Has("mhlo.num_partitions") || module.attrs().Has("mhlo.num_replicas")) return;
  int64_t devices = 0;
  for (const auto& f : module.functions()) {
    for (const ir::AttributeMap& a : f->arg_attrs()) devices = std::max(devices, DevicesNamed(a));
    for (const ir::AttributeMap& a : f->result_attrs())
      devices = std::max(devices, DevicesNamed(a));
    ir::Walk(f->body(),
             [&](ir::Operation& op) { devices = std::max(devices, DevicesNamed(op.attrs())); });
  }
  if (devices > 1) {
    module.attrs().Set("mhlo.num_partitions", ir::Attribute::Int(devices, ir::ElementType::kSI32));
  }
}

std::string DescribeSlice(const pod::Slice& s, const ProcessGrid& grid) {
  std::string line = s.name + ": " + CountOf(s.chips(), s.chip.name + " chip") + " in a " +
                     s.topology.ToString() + " torus (" + Wraps(s.topology) + "), " +
                     CountOf(s.hosts(), "host");
  if (s.num_slices > 1) line += " a slice, " + CountOf(s.num_slices, "slice") + " over DCN";
  const std::string devices =
      grid.size() == 1 ? "device 0" : "devices 0-" + std::to_string(grid.size() - 1);
  line += "; the program's " + CountOf(grid.replicas, "replica") + " x " +
          CountOf(grid.partitions, "partition") + " run on " + devices + " of " +
          std::to_string(s.num_devices());
  return line;
}

void ListSlices(std::FILE* out) {
  std::fprintf(out, "%-16s %7s %7s %-10s %-18s %6s\n", "slice", "chips", "devices", "topology",
               "wraparound", "hosts");
  for (const pod::Slice& s : pod::StandardSlices()) {
    std::fprintf(out, "%-16s %7lld %7lld %-10s %-18s %6lld\n", s.name.c_str(),
                 static_cast<long long>(s.chips()), static_cast<long long>(s.num_devices()),
                 s.topology.ToString().c_str(), Wraps(s.topology).c_str(),
                 static_cast<long long>(s.hosts()));
  }
  std::fprintf(out,
               "(every slice a plain torus or mesh; twisted tori, v4's 4x4x8_twisted and the "
               "like, are not modelled)\n");
}

}  // namespace tpusim::runtime

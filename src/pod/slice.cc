#include "tpusim/pod/slice.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace tpusim::pod {
namespace {

// A positive decimal integer filling all of `s`, or -1.
int64_t ParseCount(std::string_view s) {
  int64_t v = -1;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && end == s.data() + s.size() && v > 0 ? v : -1;
}

std::string TypePrefix(const hw::ChipSpec& chip) {
  return chip.slice.type_prefix.empty() ? chip.name : chip.slice.type_prefix;
}

// The preset a type prefix names: its own prefix, its chip name or an alias.
StatusOr<hw::ChipSpec> ChipOfPrefix(std::string_view prefix) {
  for (const hw::ChipSpec& c : hw::Presets()) {
    if (c.slice.type_prefix == prefix) return c;
  }
  return hw::FindPreset(prefix);
}

std::string OfferedSizes(const hw::ChipSpec& chip) {
  std::string s;
  for (const std::string& t : chip.slice.topologies) {
    auto topo = ParseTopology(chip, t);
    if (topo.ok()) s += (s.empty() ? "" : ", ") + AcceleratorType(chip, *topo);
  }
  return s;
}

}  // namespace

constexpr int64_t kMaxSliceChips = 1 << 16, kMaxTotalChips = 1 << 18;

int64_t Topology::num_chips() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::string Topology::ToString() const {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
  return s;
}

int64_t Slice::hosts() const {
  const int64_t per_host = chip.slice.chips_per_host;
  return (chips() + per_host - 1) / per_host;
}

int64_t Slice::AxisLinks(int axis) const {
  const int64_t d = topology.dims[axis];
  const int64_t per_line = topology.wrap[axis] && d > 2 ? d : d - 1;
  return chips() / d * per_line * 2 * num_slices;
}

int64_t Slice::ici_links() const {
  int64_t links = 0;
  for (int a = 0; a < topology.rank(); ++a) links += AxisLinks(a);
  return links;
}

int64_t Slice::num_devices() const { return total_chips() * chip.DevicesPerChip(); }

DevicePlace Slice::Place(int64_t device) const {
  DevicePlace p;
  const int64_t per_chip = chip.DevicesPerChip();
  p.core = device % per_chip;
  int64_t rest = device / per_chip;
  for (int64_t d : topology.dims) {
    p.coords.push_back(rest % d);
    rest /= d;
  }
  p.slice = rest;
  return p;
}

int64_t Slice::ChipIndex(const DevicePlace& p) const {
  int64_t index = 0;
  for (int a = topology.rank() - 1; a >= 0; --a) index = index * topology.dims[a] + p.coords[a];
  return index;
}

StatusOr<Topology> ParseTopology(const hw::ChipSpec& chip, std::string_view text) {
  if (text.ends_with("_twisted")) {
    // Their wraparound links land shifted along the long axes; the
    // collective model routes on plain tori only.
    return Unimplemented("twisted tori ('" + std::string(text) + "') are not modelled; use '" +
                         std::string(text.substr(0, text.size() - 8)) + "'");
  }
  Topology t;
  for (size_t start = 0; start <= text.size();) {
    size_t x = text.find('x', start);
    if (x == std::string_view::npos) x = text.size();
    const int64_t d = ParseCount(text.substr(start, x - start));
    if (d < 0 || d > 1024) {
      return InvalidArgument("topology '" + std::string(text) +
                             "' must be chips per axis, like 4x4x8");
    }
    t.dims.push_back(d);
    start = x + 1;
  }
  if (t.rank() != chip.slice.rank) {
    return InvalidArgument("topology '" + std::string(text) + "' has " + std::to_string(t.rank()) +
                           " axes, but " + chip.name + " slices have " +
                           std::to_string(chip.slice.rank));
  }
  bool whole_cubes = chip.slice.cube > 0;
  for (int64_t d : t.dims) whole_cubes = whole_cubes && d % chip.slice.cube == 0;
  for (int64_t d : t.dims) {
    t.wrap.push_back(whole_cubes || (chip.slice.wrap_length > 0 && d == chip.slice.wrap_length));
  }
  return t;
}

std::string AcceleratorType(const hw::ChipSpec& chip, const Topology& topology) {
  const int64_t count =
      topology.num_chips() * (chip.slice.name_counts_cores ? chip.tensor_cores : 1);
  return TypePrefix(chip) + "-" + std::to_string(count);
}

StatusOr<Slice> MakeSlice(const hw::ChipSpec& chip, std::string_view topology, int64_t num_slices) {
  if (num_slices < 1 || num_slices > 1024) {
    return InvalidArgument("a multislice has 1 to 1024 slices, not " + std::to_string(num_slices));
  }
  Slice s;
  s.chip = chip;
  TPUSIM_ASSIGN_OR_RETURN(s.topology, ParseTopology(chip, topology));
  s.num_slices = num_slices;
  // Past these sizes, which no pod comes near, the link tables would not fit.
  if (s.chips() > kMaxSliceChips || s.total_chips() > kMaxTotalChips) {
    return InvalidArgument(std::to_string(num_slices) + " x " + s.topology.ToString() +
                           " is too many chips (at most " + std::to_string(kMaxSliceChips) +
                           " a slice, " + std::to_string(kMaxTotalChips) + " in all)");
  }
  s.name =
      (num_slices > 1 ? std::to_string(num_slices) + "x" : "") + AcceleratorType(chip, s.topology);
  return s;
}

StatusOr<Slice> FindSlice(std::string_view name) {
  std::string_view rest = name;
  int64_t num_slices = 1;
  // "Nx" in front counts slices when a name follows it ("2xv5p-128"), not
  // in a name that starts with digits ("7x-8").
  const size_t x = rest.find('x');
  if (x != std::string_view::npos && x > 0 && x + 1 < rest.size() &&
      std::isalpha(static_cast<unsigned char>(rest[x + 1])) &&
      rest.substr(0, x).find_first_not_of("0123456789") == std::string_view::npos) {
    num_slices = std::max<int64_t>(ParseCount(rest.substr(0, x)), 0);  // "Nx" prefix
    rest = rest.substr(x + 1);
  }
  if (num_slices < 1) {
    return InvalidArgument("slice '" + std::string(name) + "' needs at least one slice");
  }
  if (const size_t colon = rest.find(':'); colon != std::string_view::npos) {
    TPUSIM_ASSIGN_OR_RETURN(hw::ChipSpec chip, hw::FindPreset(rest.substr(0, colon)));
    return MakeSlice(chip, rest.substr(colon + 1), num_slices);
  }
  const size_t dash = rest.rfind('-');
  const int64_t count = dash == std::string_view::npos ? -1 : ParseCount(rest.substr(dash + 1));
  if (count < 0) {
    return InvalidArgument("slice '" + std::string(name) +
                           "' must be an accelerator type like v5p-128 or 2xv5e-256");
  }
  auto chip = ChipOfPrefix(rest.substr(0, dash));
  if (!chip.ok()) {
    return NotFound("slice '" + std::string(name) + "': " + chip.status().message());
  }
  for (const std::string& t : chip->slice.topologies) {
    TPUSIM_ASSIGN_OR_RETURN(Topology topo, ParseTopology(*chip, t));
    if (AcceleratorType(*chip, topo) == TypePrefix(*chip) + "-" + std::to_string(count)) {
      return MakeSlice(*chip, t, num_slices);
    }
  }
  return NotFound("no slice '" + std::string(name) + "'; " + chip->name + " offers " +
                  OfferedSizes(*chip) + " (or any shape with --topology)");
}

std::vector<Slice> StandardSlices() {
  std::vector<Slice> out;
  for (const hw::ChipSpec& chip : hw::Presets()) {
    for (const std::string& t : chip.slice.topologies) {
      auto s = MakeSlice(chip, t);
      if (s.ok()) out.push_back(std::move(*s));
    }
  }
  return out;
}

}  // namespace tpusim::pod

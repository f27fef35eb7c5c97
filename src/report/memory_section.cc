#include "report/memory_section.h"

#include <cstdio>
#include <sstream>

#include "tpusim/base/bytes.h"
#include "tpusim/compiler/buffer_assignment.h"

namespace tpusim::report {
namespace {

using compiler::LiveBuffer;
using compiler::MemoryPlan;
using nlohmann::json;

std::string Share(int64_t part, int64_t whole) {
  if (whole <= 0) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, " (%.1f%%)", 100.0 * static_cast<double>(part) / whole);
  return buf;
}

json BufferJson(const LiveBuffer& b) {
  return {{"value", b.value}, {"type", b.type}, {"op", b.op},
          {"kind", compiler::BufferKindName(b.kind)}, {"bytes", b.bytes}};
}

}  // namespace

std::string MemoryText(const MemoryPlan& p) {
  std::ostringstream os;
  os << "HBM: peak " << FormatBinaryBytes(p.peak_bytes) << " of "
     << FormatBinaryBytes(p.capacity_bytes) << compiler::CapacityUnit(p)
     << Share(p.peak_bytes, p.capacity_bytes);
  std::string parts = compiler::PeakBreakdown(p);
  if (!parts.empty()) os << ": " << parts;
  os << "; without reuse " << FormatBinaryBytes(p.sum_of_buffers) << "; " << p.num_buffers
     << (p.num_buffers == 1 ? " buffer\n" : " buffers\n");
  if (p.host_bytes > 0) {
    os << "host memory: " << FormatBinaryBytes(p.host_bytes)
       << " offloaded (not in HBM; moved over the host link)\n";
  }
  if (p.live_at_peak.empty()) return os.str();
  os << "  at the peak (" << p.peak_at << "), largest live buffers:\n";
  for (const LiveBuffer& b : p.live_at_peak) {
    os << "    " << FormatBinaryBytes(b.bytes) << "  " << b.value << " " << b.type << " "
       << compiler::BufferKindName(b.kind) << " from " << b.op << "\n";
  }
  return os.str();
}

json MemoryJson(const MemoryPlan& p) {
  json live = json::array();
  for (const LiveBuffer& b : p.live_at_peak) live.push_back(BufferJson(b));
  return {{"function", p.function},
          {"capacity_bytes", p.capacity_bytes},
          {"devices_per_chip", p.devices_per_chip},
          {"peak_bytes", p.peak_bytes},
          {"argument_bytes", p.argument_bytes},
          {"result_bytes", p.result_bytes},
          {"constant_bytes", p.constant_bytes},
          {"temp_bytes", p.temp_bytes},
          {"fragmentation_bytes", p.fragmentation_bytes},
          {"max_live_bytes", p.max_live_bytes},
          {"sum_of_buffers", p.sum_of_buffers},
          {"num_buffers", p.num_buffers},
          {"host_bytes", p.host_bytes},
          {"peak_at", p.peak_at},
          {"live_bytes", p.live_bytes},
          {"peak_index", p.peak_index},
          {"live_at_peak", live}};
}

}  // namespace tpusim::report

#include "tpusim/hw/chip.h"

#include <cmath>
#include <cstdio>

#include "tpusim/base/bytes.h"

namespace tpusim::hw {

const char* DataflowName(Dataflow d) {
  switch (d) {
    case Dataflow::kWeightStationary:
      return "weight_stationary";
    case Dataflow::kOutputStationary:
      return "output_stationary";
    case Dataflow::kInputStationary:
      return "input_stationary";
  }
  return "?";
}

const char* CycleModelName(CycleModel m) {
  switch (m) {
    case CycleModel::kRegister:
      return "register";
    case CycleModel::kScaleSim:
      return "scale_sim";
  }
  return "?";
}

int64_t ChipSpec::MacsPerCyclePerCore() const {
  return int64_t{mxu.rows} * mxu.cols * mxu.per_core;
}

double ChipSpec::PeakBf16FlopsPerS() const {
  return 2.0 * static_cast<double>(MacsPerCyclePerCore()) * tensor_cores * clock_hz;
}

double ChipSpec::PeakInt8OpsPerS() const { return PeakBf16FlopsPerS() * mxu.int8_rate; }

namespace {

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// In (0, most]: sizes past `most` are typos, and would overflow counts.
Status Positive(const char* what, double v, double most = 1e18) {
  if (std::isfinite(v) && v > 0 && v <= most) return Status::Ok();
  if (std::isfinite(v) && v > most) {
    return InvalidArgument(std::string(what) + " = " + Num(v) + " is implausibly large (at most " +
                           Num(most) + ")");
  }
  return InvalidArgument(std::string(what) + " must be positive, got " + Num(v));
}

// In [0, most].
Status NonNegative(const char* what, double v, double most) {
  if (std::isfinite(v) && v >= 0 && v <= most) return Status::Ok();
  return InvalidArgument(std::string(what) + " must be in [0, " + Num(most) + "], got " + Num(v));
}

}  // namespace

// Each field in the range a chip could have; the bounds past the largest
// real figure are generous, there to catch typos and overflows.
Status Validate(const ChipSpec& c) {
  if (c.name.empty()) return InvalidArgument("a chip needs a name");
  constexpr double kTera = 1e12, kGiB = 1024.0 * 1024 * 1024;
  const std::pair<const char*, std::pair<double, double>> positive[] = {
      {"tensor_cores", {static_cast<double>(c.tensor_cores), 1024}},
      {"clock_hz", {c.clock_hz, 1e11}},
      {"mxu.rows", {static_cast<double>(c.mxu.rows), 65536}},
      {"mxu.cols", {static_cast<double>(c.mxu.cols), 65536}},
      {"mxu.per_core", {static_cast<double>(c.mxu.per_core), 1024}},
      {"mxu.int8_rate", {c.mxu.int8_rate, 64}},
      {"mxu.fp8_rate", {c.mxu.fp8_rate, 64}},
      {"vector_unit.lanes", {static_cast<double>(c.vpu.lanes), 65536}},
      {"vector_unit.sublanes", {static_cast<double>(c.vpu.sublanes), 65536}},
      {"vector_unit.alu_ops_per_cycle", {c.vpu.alu_ops_per_cycle, 1e6}},
      {"vector_unit.transcendental_ops_per_cycle", {c.vpu.transcendental_ops_per_cycle, 1e6}},
      {"vector_unit.transpose_units", {static_cast<double>(c.vpu.transpose_units), 1024}},
      {"memory.vmem_bytes", {static_cast<double>(c.memory.vmem_bytes), 1024 * kGiB}},
      {"memory.hbm_bytes", {static_cast<double>(c.memory.hbm_bytes), 1024 * 1024 * kGiB}},
      {"memory.hbm_bytes_per_s", {c.memory.hbm_bytes_per_s, 1000 * kTera}},
      {"memory.dma_granule_bytes", {static_cast<double>(c.memory.dma_granule_bytes), kGiB}},
      {"ici.links_per_chip", {static_cast<double>(c.ici.links_per_chip), 64}},
      {"ici.link_bytes_per_s", {c.ici.link_bytes_per_s, 100 * kTera}},
      {"slice.chips_per_host", {static_cast<double>(c.slice.chips_per_host), 4096}},
      {"slice.dcn_bytes_per_s_per_chip", {c.slice.dcn_bytes_per_s_per_chip, 100 * kTera}},
  };
  for (const auto& [name, value] : positive) {
    TPUSIM_RETURN_IF_ERROR(Positive(name, value.first, value.second));
  }
  const std::pair<const char*, std::pair<double, double>> non_negative[] = {
      {"op_overhead_s", {c.op_overhead_s, 1}},
      {"published_bf16_flops", {c.published_bf16_flops, 1e21}},
      {"ici.hop_latency_s", {c.ici.hop_latency_s, 1}},
      {"host.bytes_per_s", {c.host.bytes_per_s, 100 * kTera}},
      {"host.latency_s", {c.host.latency_s, 1}},
      {"slice.cube", {static_cast<double>(c.slice.cube), 1024}},
      {"slice.wrap_length", {static_cast<double>(c.slice.wrap_length), 65536}},
  };
  for (const auto& [name, value] : non_negative) {
    TPUSIM_RETURN_IF_ERROR(NonNegative(name, value.first, value.second));
  }
  for (const auto& [name, v] :
       {std::pair{"mxu.sustained_fraction", c.mxu.sustained_fraction},
        {"memory.hbm_sustained_fraction", c.memory.hbm_sustained_fraction}}) {
    if (!(v > 0 && v <= 1))
      return InvalidArgument(std::string(name) + " must be in (0, 1], got " + Num(v));
  }
  if (c.slice.rank != 2 && c.slice.rank != 3) {
    return InvalidArgument("slice.rank must be 2 or 3, got " + std::to_string(c.slice.rank));
  }
  if (c.mxu.cycle_model == CycleModel::kScaleSim && c.mxu.double_buffered) {
    return InvalidArgument(
        "mxu.cycle_model = \"scale_sim\" counts folds back to back: "
        "set mxu.double_buffered = false");
  }
  if (c.megacore && c.tensor_cores < 2) {
    return InvalidArgument("megacore needs at least 2 tensor_cores");
  }
  return Status::Ok();
}

std::string DescribeFields(const ChipSpec& c) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s%d TC%s x %d MXU%s %dx%d, %s HBM",
                c.megacore ? "megacore of " : "", c.tensor_cores, c.tensor_cores == 1 ? "" : "s",
                c.mxu.per_core, c.mxu.per_core == 1 ? "" : "s", c.mxu.rows, c.mxu.cols,
                FormatBinaryBytes(c.memory.hbm_bytes).c_str());
  return buf;
}

}  // namespace tpusim::hw

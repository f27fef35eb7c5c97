#include "tpusim/hw/chip.h"

#include <cmath>

namespace tpusim::hw {

const char* DataflowName(Dataflow d) {
  switch (d) {
    case Dataflow::kWeightStationary: return "weight_stationary";
    case Dataflow::kOutputStationary: return "output_stationary";
    case Dataflow::kInputStationary: return "input_stationary";
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

Status Positive(const char* what, double v) {
  if (std::isfinite(v) && v > 0) return Status::Ok();
  return InvalidArgument(std::string(what) + " must be positive, got " + std::to_string(v));
}

}  // namespace

Status Validate(const ChipSpec& c) {
  if (c.name.empty()) return InvalidArgument("a chip needs a name");
  TPUSIM_RETURN_IF_ERROR(Positive("tensor_cores", c.tensor_cores));
  TPUSIM_RETURN_IF_ERROR(Positive("clock_hz", c.clock_hz));
  TPUSIM_RETURN_IF_ERROR(Positive("mxu.rows", c.mxu.rows));
  TPUSIM_RETURN_IF_ERROR(Positive("mxu.cols", c.mxu.cols));
  TPUSIM_RETURN_IF_ERROR(Positive("mxu.per_core", c.mxu.per_core));
  TPUSIM_RETURN_IF_ERROR(Positive("mxu.int8_rate", c.mxu.int8_rate));
  TPUSIM_RETURN_IF_ERROR(Positive("mxu.fp8_rate", c.mxu.fp8_rate));
  if (!(c.mxu.sustained_fraction > 0 && c.mxu.sustained_fraction <= 1)) {
    return InvalidArgument("mxu.sustained_fraction must be in (0, 1]");
  }
  TPUSIM_RETURN_IF_ERROR(Positive("vector_unit.lanes", c.vpu.lanes));
  TPUSIM_RETURN_IF_ERROR(Positive("vector_unit.sublanes", c.vpu.sublanes));
  TPUSIM_RETURN_IF_ERROR(Positive("vector_unit.alu_ops_per_cycle", c.vpu.alu_ops_per_cycle));
  TPUSIM_RETURN_IF_ERROR(Positive("vector_unit.transcendental_ops_per_cycle",
                                  c.vpu.transcendental_ops_per_cycle));
  TPUSIM_RETURN_IF_ERROR(Positive("vector_unit.transpose_units", c.vpu.transpose_units));
  TPUSIM_RETURN_IF_ERROR(Positive("memory.vmem_bytes", static_cast<double>(c.memory.vmem_bytes)));
  TPUSIM_RETURN_IF_ERROR(Positive("memory.hbm_bytes", static_cast<double>(c.memory.hbm_bytes)));
  TPUSIM_RETURN_IF_ERROR(Positive("memory.hbm_bytes_per_s", c.memory.hbm_bytes_per_s));
  if (!(c.memory.hbm_sustained_fraction > 0 && c.memory.hbm_sustained_fraction <= 1)) {
    return InvalidArgument("memory.hbm_sustained_fraction must be in (0, 1]");
  }
  TPUSIM_RETURN_IF_ERROR(
      Positive("memory.dma_granule_bytes", static_cast<double>(c.memory.dma_granule_bytes)));
  TPUSIM_RETURN_IF_ERROR(Positive("ici.links_per_chip", c.ici.links_per_chip));
  TPUSIM_RETURN_IF_ERROR(Positive("ici.link_bytes_per_s", c.ici.link_bytes_per_s));
  if (!(c.ici.hop_latency_s >= 0) || !std::isfinite(c.ici.hop_latency_s)) {
    return InvalidArgument("ici.hop_latency_s must be zero or positive");
  }
  for (auto [name, v] : {std::pair{"host.bytes_per_s", c.host.bytes_per_s},
                         std::pair{"host.latency_s", c.host.latency_s}}) {
    if (!(v >= 0) || !std::isfinite(v)) {
      return InvalidArgument(std::string(name) + " must be zero or positive");
    }
  }
  if (c.slice.rank != 2 && c.slice.rank != 3) {
    return InvalidArgument("slice.rank must be 2 or 3, got " + std::to_string(c.slice.rank));
  }
  TPUSIM_RETURN_IF_ERROR(Positive("slice.chips_per_host", c.slice.chips_per_host));
  TPUSIM_RETURN_IF_ERROR(
      Positive("slice.dcn_bytes_per_s_per_chip", c.slice.dcn_bytes_per_s_per_chip));
  if (c.slice.cube < 0 || c.slice.wrap_length < 0) {
    return InvalidArgument("slice.cube and slice.wrap_length must be zero or positive");
  }
  if (!(c.op_overhead_s >= 0) || !std::isfinite(c.op_overhead_s)) {
    return InvalidArgument("op_overhead_s must be zero or positive");
  }
  if (c.mxu.cycle_model == CycleModel::kScaleSim && c.mxu.double_buffered) {
    return InvalidArgument(
        "mxu.cycle_model = \"scale_sim\" counts folds back to back: "
        "set mxu.double_buffered = false");
  }
  if (c.megacore && c.tensor_cores < 2) {
    return InvalidArgument("megacore needs at least 2 tensor_cores");
  }
  // Sizes past these are typos, and would overflow cycle counts.
  if (c.mxu.rows > 65536 || c.mxu.cols > 65536 || c.mxu.per_core > 1024 ||
      c.tensor_cores > 1024) {
    return InvalidArgument("MXU or core counts are implausibly large");
  }
  return Status::Ok();
}

}  // namespace tpusim::hw

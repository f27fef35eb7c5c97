// Kernels written in Pallas and compiled by Mosaic, as JAX lowers them
// (jax/_src/tpu_custom_call.py):
//   stablehlo.custom_call @tpu_custom_call(%x, ...) {backend_config = "{\"custom_call_config\":
//       {\"body\": \"<base64 Mosaic bytecode>\", \"cost_estimate\": {\"bytes_accessed\": N,
//       \"flops\": N, \"remote_bytes_transferred\": N, \"transcendentals\": N}, ...}}",
//       kernel_name = "my_kernel"}
// tpusim cannot run Mosaic bytecode: running one is kUnimplemented naming
// the kernel. Timing prices the kernel's own cost_estimate (what pl.pallas_call
// was given or inferred): its FLOPs as bf16 MXU products of 256-wide tiles
// (close to the chip's peak once there are many), its transcendentals on
// the vector unit, its bytes on HBM. Without one, timing
// fails rather than guess. GPU kernels (Mosaic GPU, Triton) are refused.
#include <nlohmann/json.hpp>

#include "ops/util/op_util.h"
#include "ops/util/work_util.h"
#include "tpusim/ops/custom_call.h"

namespace tpusim::ops {
namespace {

struct CostEstimate {
  int64_t flops = 0, transcendentals = 0, bytes_accessed = 0, remote_bytes = 0;
};

// The kernel's name: the op's kernel_name attribute (or the config's
// "name", as older JAX wrote it); "" when neither says.
std::string KernelName(const ir::Operation& op, const nlohmann::json& config) {
  ir::Attribute a = op.attr("kernel_name");
  if (a.kind() == ir::Attribute::Kind::kString) return a.str();
  const auto it = config.find("name");
  return it != config.end() && it->is_string() ? it->get<std::string>() : "";
}

// custom_call_config of the backend_config JSON; null when it is missing
// or malformed.
nlohmann::json CallConfig(const ir::Operation& op) {
  ir::Attribute config = op.attr("backend_config");
  if (config.kind() != ir::Attribute::Kind::kString) return nullptr;
  nlohmann::json j = nlohmann::json::parse(config.str(), nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return nullptr;
  const auto it = j.find("custom_call_config");
  return it != j.end() && it->is_object() ? *it : nlohmann::json(nullptr);
}

// A non-negative integer field of `j`; nullopt when absent or not one.
std::optional<int64_t> Count(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return std::nullopt;
  const int64_t v = it->get<int64_t>();
  return v >= 0 ? std::optional<int64_t>(v) : std::nullopt;
}

std::optional<CostEstimate> FindCostEstimate(const nlohmann::json& config) {
  const auto it = config.find("cost_estimate");
  if (it == config.end() || !it->is_object()) return std::nullopt;
  std::optional<int64_t> flops = Count(*it, "flops");
  std::optional<int64_t> transcendentals = Count(*it, "transcendentals");
  std::optional<int64_t> bytes = Count(*it, "bytes_accessed");
  if (!flops || !transcendentals || !bytes) return std::nullopt;
  return CostEstimate{*flops, *transcendentals, *bytes,
                      Count(*it, "remote_bytes_transferred").value_or(0)};
}

std::string Describe(const ir::Operation& op, const nlohmann::json& config) {
  const std::string name = KernelName(op, config);
  return "Pallas TPU kernel " + (name.empty() ? std::string("(unnamed)") : "'" + name + "'");
}

Status VerifyTpuCustomCall(const ir::Operation& op) {
  const nlohmann::json config = CallConfig(op);
  if (config.is_null() || !config.contains("body")) {
    return InvalidArgument(
        "tpu_custom_call needs a backend_config JSON with custom_call_config.body "
        "(a Mosaic kernel)");
  }
  return Status::Ok();
}

StatusOr<std::vector<Tensor>> EvalTpuCustomCall(EvalContext&, const ir::Operation& op,
                                                std::span<const Tensor>) {
  return Unimplemented(Describe(op, CallConfig(op)) +
                       ": tpusim cannot run Mosaic kernels (Pallas); time the program with "
                       "--timing-only, which prices the kernel's cost_estimate");
}

// The HBM traffic of `bytes` as f32 rows of 128 lanes, whole (8, 128)
// tiles, so that the chip's tiled layout adds no padding of its own.
ir::Type TrafficOf(int64_t bytes) {
  constexpr int64_t kTileBytes = 8 * 128 * 4;
  const int64_t tiles = (bytes + kTileBytes - 1) / kTileBytes;
  return ir::Type::Tensor(ir::ElementType::kF32, {tiles * 8, 128});
}

Work TpuCustomCallWork(const ir::Operation& op) {
  const nlohmann::json config = CallConfig(op);
  const std::optional<CostEstimate> cost =
      config.is_null() ? std::nullopt : FindCostEstimate(config);
  if (!cost) {
    return {.unpriced = true,
            .error = Describe(op, config) +
                     " has no cost_estimate: tpusim cannot price Mosaic kernels without one "
                     "(give pl.pallas_call a cost_estimate)"};
  }
  Work w;
  w.flops = cost->flops;
  if (cost->flops > 0) {
    // FLOPs as bf16 products of whole MXU tiles (256 is a multiple of every
    // generation's array side), so that many run near the chip's peak.
    constexpr int64_t kSide = 256;
    const int64_t rows =
        std::max<int64_t>(1, (cost->flops + 2 * kSide * kSide - 1) / (2 * kSide * kSide));
    w.matmuls.push_back({.m = rows, .k = kSide, .n = kSide});
  }
  w.AddVector(VectorClass::kTranscendental, cost->transcendentals);
  if (cost->bytes_accessed > 0) w.reads.push_back(TrafficOf(cost->bytes_accessed));
  w.priced_as = Describe(op, config) + " from its cost_estimate (" + std::to_string(cost->flops) +
                " FLOP on the MXU, " + std::to_string(cost->transcendentals) +
                " transcendentals, " + std::to_string(cost->bytes_accessed) + " bytes of HBM" +
                (cost->remote_bytes > 0 ? "; its " + std::to_string(cost->remote_bytes) +
                                              " remote bytes are not priced"
                                        : std::string()) +
                ")";
  return w;
}

TPUSIM_REGISTER_CUSTOM_CALL({.target = "tpu_custom_call",
                             .verify = VerifyTpuCustomCall,
                             .eval = EvalTpuCustomCall,
                             .work = TpuCustomCallWork});

// GPU kernels in a program: JAX exported it for a GPU.
std::string GpuKernelError(const ir::Operation& op, const std::string& kind) {
  ir::Attribute name = op.attr("kernel_name");
  if (name.kind() != ir::Attribute::Kind::kString) name = op.attr("name");
  const std::string named =
      name.kind() == ir::Attribute::Kind::kString ? " '" + name.str() + "'" : "";
  return kind + " kernel" + named + " (custom_call @" + CallTarget(op) +
         "): a GPU kernel, which tpusim neither runs nor prices; export the program for TPU";
}

void RegisterGpuKernel(const std::string& target, const std::string& kind) {
  CustomCallRegistry::Register(
      {.target = target,
       .eval = [kind](EvalContext&, const ir::Operation& op, std::span<const Tensor>)
           -> StatusOr<std::vector<Tensor>> { return Unimplemented(GpuKernelError(op, kind)); },
       .work =
           [kind](const ir::Operation& op) {
             return Work{.unpriced = true, .error = GpuKernelError(op, kind)};
           }});
}

[[maybe_unused]] const bool kGpuKernels = [] {
  RegisterGpuKernel("mosaic_gpu", "Mosaic GPU (Pallas)");
  RegisterGpuKernel("mosaic_gpu_v2", "Mosaic GPU (Pallas)");
  RegisterGpuKernel("__gpu$xla.gpu.triton", "Triton (Pallas)");
  RegisterGpuKernel("triton_kernel_call", "Triton (jax-triton)");
  return true;
}();

}  // namespace
}  // namespace tpusim::ops

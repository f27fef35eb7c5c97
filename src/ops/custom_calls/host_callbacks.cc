#include "ops/custom_calls/host_callbacks.h"

#include "ops/util/op_util.h"
#include "ops/util/work_util.h"
#include "tpusim/ops/custom_call.h"

namespace tpusim::ops {

std::optional<std::string> HostCallbackName(const ir::Operation& op) {
  ir::Attribute attrs = op.attr("mhlo.frontend_attributes");
  for (const char* key : {"_xla_host_transfer_handler_name", "_xla_host_transfer_rendezvous"}) {
    ir::Attribute name = attrs.Get(key);
    if (name.kind() == ir::Attribute::Kind::kString) return name.str();
  }
  return std::nullopt;
}

std::string HostCallbackError(const std::string& what) {
  return what +
         ": a host callback (jax.pure_callback, io_callback or debug.print); tpusim cannot "
         "call back into Python. Time the program with --timing-only, which prices the "
         "callback as a round trip to the host";
}

namespace {

// The callback's index in the module's host callbacks (the FFI targets'
// backend_config), for the error message.
std::string Describe(const ir::Operation& op) {
  std::string s = "custom_call @" + CallTarget(op);
  ir::Attribute index = op.attr("mhlo.backend_config").Get("index");
  if (index.kind() == ir::Attribute::Kind::kInt) {
    s += " (callback " + std::to_string(index.int_value()) + ")";
  }
  return s;
}

StatusOr<std::vector<Tensor>> EvalCallback(EvalContext&, const ir::Operation& op,
                                           std::span<const Tensor>) {
  return Unimplemented(HostCallbackError(Describe(op)));
}

// The operands go to the host and the results come back: two transfers
// over the host link (the host's Python time is not modeled).
Work CallbackWork(const ir::Operation& op) {
  Work w;
  int64_t sent = 0, received = 0;
  for (int i = 0; i < op.num_operands(); ++i) sent += LogicalBytes(op.operand(i).type());
  for (int i = 0; i < op.num_results(); ++i) received += LogicalBytes(op.result(i).type());
  w.host_bytes = sent + received;
  w.host_transfers = 2;
  w.priced_as = "a host callback round trip (" + std::to_string(sent) + " bytes to the host, " +
                std::to_string(received) + " back; Python's own time not modeled)";
  return w;
}

[[maybe_unused]] const bool kRegistered = [] {
  for (const char* target :
       {"xla_python_cpu_callback", "xla_python_gpu_callback", "xla_ffi_python_cpu_callback",
        "xla_ffi_python_gpu_callback", "xla_ffi_partitioned_python_cpu_callback",
        "xla_ffi_partitioned_python_gpu_callback"}) {
    CustomCallRegistry::Register({.target = target, .eval = EvalCallback, .work = CallbackWork});
  }
  return true;
}();

}  // namespace
}  // namespace tpusim::ops

// Host callbacks: jax.pure_callback, io_callback and jax.debug.print call
// Python on the host. On CPU and GPU JAX lowers them to custom calls
// (xla_ffi_python_cpu_callback, ...); on TPU to stablehlo.send / recv with
// the host (is_host_transfer, and mhlo.frontend_attributes naming the
// callback's _xla_host_transfer_handler_name). tpusim has no Python to call:
// running one fails naming the callback; timing prices a round trip over
// the chip's host link. Internal to src/ops.
#ifndef TPUSIM_OPS_CUSTOM_CALLS_HOST_CALLBACKS_H_
#define TPUSIM_OPS_CUSTOM_CALLS_HOST_CALLBACKS_H_

#include <optional>
#include <string>

#include "tpusim/ir/ir.h"

namespace tpusim::ops {

// The callback a host-transfer send/recv serves, from its frontend
// attributes (the handler or rendezvous name); nullopt when it names none,
// as a plain host transfer (the conformance programs' send/recv) does.
std::optional<std::string> HostCallbackName(const ir::Operation& op);

// The error for running a host callback, `what` naming it.
std::string HostCallbackError(const std::string& what);

}  // namespace tpusim::ops

#endif  // TPUSIM_OPS_CUSTOM_CALLS_HOST_CALLBACKS_H_

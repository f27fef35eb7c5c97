// What the GPU linear algebra targets share (gpu_solver_calls.cc, the FFI
// forms; gpu_legacy_solver_calls.cc, the older descriptor forms): their
// names in the report and their pricing as the TPU's equivalent. Internal
// to src/ops.
#ifndef TPUSIM_OPS_CUSTOM_CALLS_LINALG_GPU_SOLVER_CALLS_H_
#define TPUSIM_OPS_CUSTOM_CALLS_LINALG_GPU_SOLVER_CALLS_H_

#include <string>
#include <string_view>

#include "ops/custom_calls/linalg/linalg_family.h"

namespace tpusim::ops::linalg {

// The call a GPU target makes, for the report: "cuSOLVER getrf (a GPU
// solver call)" for cusolver_getrf_ffi, "ROCm threefry2x32 (a jaxlib GPU
// kernel)" for hip_threefry2x32_ffi.
std::string GpuCallName(std::string_view target);

// `routine`'s work, which names what it was priced as ("LAPACK getrf"),
// as the work of the GPU call: priced_as "<GpuCallName>, priced as LAPACK
// getrf on the vector units". Work without priced_as (a call that fails
// verification, priced by its traffic) is left as it is.
WorkFn GpuWork(WorkFn routine);

// Registers `f` as `target` for all four element types, priced by GpuWork.
bool RegisterGpuFamily(std::string target, Family f);

}  // namespace tpusim::ops::linalg

#endif  // TPUSIM_OPS_CUSTOM_CALLS_LINALG_GPU_SOLVER_CALLS_H_

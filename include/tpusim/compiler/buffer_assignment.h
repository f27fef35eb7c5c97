// Liveness-based buffer assignment: gives every HBM buffer of a program an
// offset, reusing the space of buffers that are dead, and finds the peak the
// chip must hold (pass.h runs it as the pipeline's last pass).
//
// Buffers are the values of the entry's ops, one per tensor of a tuple, at
// their tiled sizes (hw::PaddedBytes, layouts included). Arguments and
// constants are live for the whole program, results from their op to the
// end, other values from their op to their last use. Values that only rename
// another (tuple, get_tuple_element, optimization_barrier, free reshapes and
// bitcasts) share its buffer. Loop, branch and call bodies are planned on
// their own; their peak is a temporary of the op that runs them, and the
// values they return are written into that op's results. Fusion and
// reduction bodies live on chip and take no HBM.
#ifndef TPUSIM_COMPILER_BUFFER_ASSIGNMENT_H_
#define TPUSIM_COMPILER_BUFFER_ASSIGNMENT_H_

#include <string>

#include "tpusim/base/status.h"
#include "tpusim/compiler/memory_plan.h"
#include "tpusim/hw/chip.h"
#include "tpusim/ir/ir.h"

namespace tpusim::compiler {

// The memory plan of `entry`, a function of `module`, on `chip`; a plan
// larger than the chip's HBM is still returned. kUnimplemented for recursive
// calls and multi-block bodies. REQUIRES: Renumber() since the last change
// of `entry` and of every function it calls (values are named by their ids,
// as the printer numbers them).
StatusOr<MemoryPlan> PlanMemory(const ir::Module& module, const ir::Function& entry,
                                const hw::ChipSpec& chip);

// The peak's parts that are not zero: "arguments 4 KiB, temporaries 8 KiB".
std::string PeakBreakdown(const MemoryPlan& plan);

// What the capacity is of, after its figure: "" where a device is a whole
// chip, " per device (2 TensorCores per chip, ...)" where each core is one.
std::string CapacityUnit(const MemoryPlan& plan);

// XLA's out-of-memory report for a plan over capacity: "@main needs 21.3 GiB
// of HBM but v5e has 16 GiB (arguments ...); largest buffers live at the
// peak (...): %5 tensor<...> 8 GiB from stablehlo.dot_general at f.mlir:7:10; ...".
std::string OutOfMemoryMessage(const MemoryPlan& plan, const std::string& chip_name);

}  // namespace tpusim::compiler

#endif  // TPUSIM_COMPILER_BUFFER_ASSIGNMENT_H_

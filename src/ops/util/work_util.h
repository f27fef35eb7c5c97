// Building blocks for OpDef::work rules, shared by the op files. Each rule
// states what an op does independent of any chip: element operations by
// class, matmuls, bytes read and written, random accesses.
#ifndef TPUSIM_OPS_UTIL_WORK_UTIL_H_
#define TPUSIM_OPS_UTIL_WORK_UTIL_H_

#include "tpusim/ir/ir.h"
#include "tpusim/ops/op_def.h"
#include "tpusim/ops/work.h"

namespace tpusim::ops {

// Reads every operand and writes every result once.
Work ReadsAndWrites(const ir::Operation& op);

// An elementwise op: ReadsAndWrites plus `ops_per_element` vector ops of
// class `c` per result element; float results count one FLOP per op.
Work ElementwiseWork(const ir::Operation& op, VectorClass c, int64_t ops_per_element = 1);

// Vector ops per element of an elementwise op, by class, for ops whose
// lowering mixes classes (a complex multiply: 4 multiplies and 2 adds).
struct ElementOps {
  int64_t alu = 0, multiply = 0, divide = 0, transcendental = 0;
};

// ReadsAndWrites plus `ops` per element of result 0; float and complex
// results count every op as a FLOP.
Work ElementwiseWork(const ir::Operation& op, const ElementOps& ops);

// True if any operand or result of `op` holds complex elements.
bool HasComplexElements(const ir::Operation& op);

// The work rule of an elementwise op that costs `real` per element, or
// `complex` when its operands or results are complex.
WorkFn ElementwiseRule(ElementOps real, ElementOps complex);
// The same cost for every element type.
WorkFn ElementwiseRule(ElementOps ops);

// A data-movement op that copies its result's elements (slice, pad,
// broadcast, concatenate...): ReadsAndWrites plus one ALU op per element.
Work CopyWork(const ir::Operation& op);

// Ops that only name or regroup values (tuple, get_tuple_element,
// optimization_barrier, constants, control flow shells).
Work FreeWork(const ir::Operation& op);

// The vector class of the single op in a per-element region (a reduce body
// `add`, a comparator `compare`): kMultiply for multiply, kDivide for divide,
// kTranscendental for exponential and friends, else kAlu. Also returns the
// number of ops in the region's block (at least 1).
VectorClass RegionClass(const ir::Region& region, int64_t* ops_in_region);

// Adds `evaluations` runs of the per-element `region` to `w`: its op count
// each, all priced at its dearest op's class (RegionClass); they count as
// FLOPs when `is_float`.
void AddRegionWork(Work& w, const ir::Region& region, int64_t evaluations, bool is_float);

// True if `t` is a tensor of floating-point or complex elements.
bool IsFloatTensor(const ir::Type& t);

}  // namespace tpusim::ops

#endif  // TPUSIM_OPS_UTIL_WORK_UTIL_H_

// The XLA HLO text front end, second stage: HloModuleAst -> tpusim IR, the
// same IR the StableHLO front end builds (generic attribute forms, regions
// with scalar block arguments). The driver (lower.cc) walks computations
// and instructions; each opcode family has its own file:
//   lower_data.cc     constants, shapes and data movement, elementwise
//   lower_compute.cc  dot, convolution, reductions, sort, linalg, fft
//   lower_control.cc  while, conditional, call, fusion, custom-call,
//                     async pairs, collectives, infeed/outfeed/send/recv
// and attrs.cc reads the attribute values they share.
#ifndef TPUSIM_FRONTEND_HLO_LOWER_H_
#define TPUSIM_FRONTEND_HLO_LOWER_H_

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "frontend/hlo/ast.h"
#include "tpusim/base/status.h"
#include "tpusim/ir/ir.h"

namespace tpusim::frontend {

// What an HLO instruction evaluates to. XLA passes tuples where StableHLO
// has variadic operands and results, so a tuple stays split into its
// elements for as long as possible and is built (stablehlo.tuple) only where
// a whole tuple value is needed.
struct HloValue {
  ir::Type type;                    // the instruction's HLO shape
  ir::Value whole;                  // one IR value holding all of it, or
  std::vector<ir::Value> elements;  // the elements of a tuple-shaped value
  static HloValue Whole(ir::Value v) { return {v.type(), v, {}}; }
};

class HloLowering;
using LowerFn = StatusOr<HloValue> (*)(HloLowering&, const HloInstruction&);
using LowerTable = std::unordered_map<std::string_view, LowerFn>;

// The per-family opcode tables.
void AddDataLowerings(LowerTable& table);
void AddComputeLowerings(LowerTable& table);
void AddControlLowerings(LowerTable& table);

class HloLowering {
 public:
  HloLowering(const HloSource& source, const HloModuleAst& ast, ir::Module* module);

  // Lowers the ENTRY computation to @main and, on demand, what it calls.
  Status LowerModule();

  // ---- for the opcode families ----
  const HloSource& source() const { return src_; }
  ir::Location Loc(const HloInstruction& inst) const { return src_.LocationAt(inst.offset); }
  // kInvalidArgument at the instruction / kUnimplemented at its opcode.
  Status Error(const HloInstruction& inst, std::string_view message) const;
  Status Unsupported(const HloInstruction& inst, std::string_view message) const;

  // Appends an op at the insertion point, located at `inst`.
  ir::Operation* Emit(const HloInstruction& inst, std::string_view name,
                      std::vector<ir::Value> operands, std::vector<ir::Type> results);
  // `inst`'s value from a single-result op, or from a multi-result op whose
  // results are the elements of `inst`'s tuple shape.
  HloValue ResultOf(const HloInstruction& inst, ir::Operation* op) const;
  // The result types for an op returning `inst`'s shape: its tuple elements
  // when `split` and the shape is a tuple, else the shape itself.
  static std::vector<ir::Type> ResultTypes(const HloInstruction& inst, bool split);

  Status ExpectOperands(const HloInstruction& inst, int n) const;
  Status ExpectMinOperands(const HloInstruction& inst, int n) const;
  // Operand i as it is / as one IR value. REQUIRES: i < operand count.
  const HloValue& OperandValue(const HloInstruction& inst, int i) const;
  ir::Value Operand(const HloInstruction& inst, int i);
  std::vector<ir::Value> AllOperands(const HloInstruction& inst);
  // A value as one IR value (building a split tuple) / as its tuple's
  // elements (taking a whole tuple apart). Elements REQUIRES a tuple shape.
  ir::Value Whole(const HloInstruction& at, const HloValue& v);
  std::vector<ir::Value> Elements(const HloInstruction& at, const HloValue& v);
  // The values `inst`'s results stand for when flattened one tuple level.
  std::vector<ir::Value> Flatten(const HloInstruction& at, const HloValue& v);

  // The computation named `name` (written at `offset`).
  StatusOr<const HloComputation*> Computation(std::string_view name, size_t offset) const;
  // The computation an attribute (`to_apply=%add`) names.
  StatusOr<const HloComputation*> Called(const HloInstruction& inst, std::string_view key);
  // Lowers `comp` into a new block of `region` whose arguments are
  // `arg_types`, its parameters bound to `bind(arguments)`, and ends the
  // block with a stablehlo.return of its root, flattened one tuple level when
  // `flatten_root`. Parameters may be bound to values of the enclosing scope
  // (branches of conditionals capture their operand).
  using BindParams = std::function<std::vector<HloValue>(const std::vector<ir::Value>&)>;
  Status LowerRegion(const HloInstruction& at, const HloComputation& comp, ir::Region* region,
                     const std::vector<ir::Type>& arg_types, const BindParams& bind,
                     bool flatten_root);
  // The same with one parameter per argument (reduce, sort, fusion bodies).
  Status LowerRegionWithArgs(const HloInstruction& at, const HloComputation& comp,
                             ir::Region* region, const std::vector<ir::Type>& arg_types,
                             bool flatten_root);
  // Inlines `comp` at the insertion point with its parameters bound to
  // `params`; returns its root's value (async wrapped computations).
  StatusOr<HloValue> Inline(const HloInstruction& at, const HloComputation& comp,
                            std::vector<HloValue> params);
  // The private function `comp` lowers to (lowering it on first use).
  StatusOr<std::string> FunctionFor(const HloInstruction& at, const HloComputation& comp);

  // The instruction an async `-start` is finished by (its `-done` user), or null.
  const HloInstruction* DoneOf(const HloInstruction& start) const;

 private:
  struct Body;  // per-computation lowering state, in lower.cc
  StatusOr<HloValue> LowerBody(const HloComputation& comp, std::vector<HloValue> params,
                               ir::Block* block);
  Status LowerInstruction(const HloInstruction& inst, Body& body, int index);
  StatusOr<std::vector<int>> Order(const HloComputation& comp, Body& body);
  StatusOr<ir::Function*> LowerFunction(const HloComputation& comp, std::string name);
  Status KeepShardings(const HloComputation& comp, ir::Function* f) const;

  const HloSource& src_;
  const HloModuleAst& ast_;
  ir::Module* module_;
  LowerTable table_;
  ir::Block* block_ = nullptr;  // the insertion point
  Body* body_ = nullptr;        // the computation being lowered
  int depth_ = 0;
  int64_t lowered_ = 0;  // instructions lowered, region copies included
  int64_t budget_ = 0;   // bound on lowered_
  std::set<const HloComputation*> in_progress_;
  std::unordered_map<const HloComputation*, std::string> functions_;
};

// ---- attribute values (attrs.cc) ----
// Each reads the raw text of attribute `key` of `inst`; errors point into it.
// A missing required attribute is an error at the instruction.

StatusOr<std::vector<int64_t>> AttrInts(const HloLowering& l, const HloInstruction& inst,
                                        std::string_view key);
StatusOr<std::vector<int64_t>> AttrIntsOr(const HloLowering& l, const HloInstruction& inst,
                                          std::string_view key, std::vector<int64_t> fallback);
StatusOr<int64_t> AttrInt(const HloLowering& l, const HloInstruction& inst, std::string_view key);
StatusOr<int64_t> AttrIntOr(const HloLowering& l, const HloInstruction& inst, std::string_view key,
                            int64_t fallback);
StatusOr<bool> AttrBoolOr(const HloLowering& l, const HloInstruction& inst, std::string_view key,
                          bool fallback);
// A bare word (`direction=LT`); empty when absent.
std::string_view AttrWord(const HloInstruction& inst, std::string_view key);
// A quoted string, unescaped; empty when absent.
StatusOr<std::string> AttrString(const HloLowering& l, const HloInstruction& inst,
                                 std::string_view key);
// `{{0,1},{2,3}}` or the iota form `[2,2]<=[4]` / `[2,2]<=[2,2]T(1,0)`, as
// rows; empty when absent.
StatusOr<std::vector<std::vector<int64_t>>> AttrGroups(const HloLowering& l,
                                                       const HloInstruction& inst,
                                                       std::string_view key);
// A group list in a frontend attribute, as XLA writes the pairs of a
// send/recv: frontend_attributes={KEY="{{0,1},{1,2}}"}; none when absent.
StatusOr<std::vector<std::vector<int64_t>>> FrontendGroups(const HloLowering& l,
                                                           const HloInstruction& inst,
                                                           std::string_view key);

// `window={size=3x3 stride=2x2 pad=1_1x1_1 lhs_dilate=.. rhs_dilate=..
// rhs_reversal=..}` with XLA's defaults for absent fields.
struct HloWindow {
  std::vector<int64_t> size, stride, pad_low, pad_high, lhs_dilate, rhs_dilate;
  std::vector<int64_t> reversal;  // 0/1 per dimension
};
StatusOr<HloWindow> AttrWindow(const HloLowering& l, const HloInstruction& inst, int64_t rank);

// `operand_precision={high,default}` as the precision_config attribute
// (DEFAULT for both when absent).
StatusOr<ir::Attribute> AttrPrecisionConfig(const HloLowering& l, const HloInstruction& inst);

// `channel_id=N` as a #stablehlo.channel_handle of `type`, or null.
StatusOr<ir::Attribute> AttrChannelHandle(const HloLowering& l, const HloInstruction& inst,
                                          int64_t type);

// The literal of `constant(...)` for `type`; a null Attribute when XLA
// elided it (`{...}`).
StatusOr<ir::Attribute> ParseHloLiteral(const HloSource& source, std::string_view text,
                                        const ir::Type& type);

// ---- IR attribute builders ----
ir::Attribute I64Array(const std::vector<int64_t>& v);
ir::Attribute I64(int64_t v);
// A 2-D tensor<rows x cols x i64> of `flat` (row-major).
ir::Attribute I64Matrix(int64_t rows, int64_t cols, const std::vector<int64_t>& flat);
// Rows of unequal length are padded with -1, as StableHLO does.
ir::Attribute I64Rows(const std::vector<std::vector<int64_t>>& rows);

}  // namespace tpusim::frontend

#endif  // TPUSIM_FRONTEND_HLO_LOWER_H_

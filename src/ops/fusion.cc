// tpusim.fusion: a kernel the compiler's fusion pass made of several ops, as
// XLA's fusion instruction. Its one region computes the results from the
// operands; the kernel reads its operands from HBM and writes its results
// once, and keeps the values in between on chip.
#include <algorithm>

#include "ops/fusion_chunks.h"
#include "ops/util/op_util.h"
#include "ops/util/work_util.h"

namespace tpusim::ops {
namespace {

bool IsFusionKind(const std::string& kind) {
  return kind == "kLoop" || kind == "kInput" || kind == "kOutput";
}

Status VerifyBody(const ir::Operation& op) {
  const ir::Region& region = op.region(0);
  if (region.num_blocks() != 1) {
    return InvalidArgument("tpusim.fusion needs one block in its region, has " +
                           std::to_string(region.num_blocks()));
  }
  const ir::Block& body = region.front();
  if (ir::TypesOf(body.arguments()) != ir::TypesOf(op.operands())) {
    return InvalidArgument("tpusim.fusion block arguments " +
                           ir::TypeListString(ir::TypesOf(body.arguments())) +
                           " differ from its operands " +
                           ir::TypeListString(ir::TypesOf(op.operands())));
  }
  const ir::Operation* ret = body.terminator();
  if (ret == nullptr || ret->name_str() != "stablehlo.return") {
    return InvalidArgument("tpusim.fusion body must end in stablehlo.return");
  }
  if (ir::TypesOf(ret->operands()) != ir::TypesOf(op.results())) {
    return InvalidArgument("tpusim.fusion returns " +
                           ir::TypeListString(ir::TypesOf(ret->operands())) +
                           " but its results are " +
                           ir::TypeListString(ir::TypesOf(op.results())));
  }
  return Status::Ok();
}

Status VerifyFusion(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumRegions(op, 1));
  TPUSIM_ASSIGN_OR_RETURN(ir::Attribute kind, GetAttr(op, "kind", ir::Attribute::Kind::kString));
  if (!IsFusionKind(kind.str())) {
    return InvalidArgument("tpusim.fusion kind must be kLoop, kInput or kOutput, not '" +
                           kind.str() + "'");
  }
  if (op.attrs().Has("name")) {
    TPUSIM_RETURN_IF_ERROR(GetAttr(op, "name", ir::Attribute::Kind::kString).status());
  }
  return VerifyBody(op);
}

// A large loop kernel of elementwise ops runs chunk by chunk; anything else
// op by op, its operands handed to the region (whose ops may reuse them).
StatusOr<std::vector<Tensor>> EvalFusion(EvalContext& ctx, const ir::Operation& op,
                                         std::span<const Tensor> operands) {
  std::vector<Tensor> owned = ctx.TakeOperands(operands);
  const ir::Attribute kind = op.attr("kind");
  if (kind.kind() == ir::Attribute::Kind::kString && kind.str() == "kLoop") {
    std::optional<StatusOr<std::vector<Tensor>>> chunked = EvalLoopInChunks(ctx, op, owned);
    if (chunked.has_value()) return std::move(*chunked);
  }
  return ctx.RunRegionConsuming(op.region(0), std::move(owned));
}

// ---- work: the inner ops' compute, HBM traffic for operands and results only

// Adds `inner`'s compute (not its reads and writes) to `w`.
void AddCompute(Work& w, const Work& inner) {
  w.matmuls.insert(w.matmuls.end(), inner.matmuls.begin(), inner.matmuls.end());
  for (int c = 0; c < kNumVectorClasses; ++c) w.vector_ops[c] += inner.vector_ops[c];
  w.transpose_elements += inner.transpose_elements;
  w.random_accesses += inner.random_accesses;
  w.random_access_bytes = std::max(w.random_access_bytes, inner.random_access_bytes);
  w.flops += inner.flops;
}

// A kOutput kernel drains the MXU's result and runs its epilogue in blocks
// of 512 x 512 output elements.
constexpr int64_t kOutputTileElements = 512 * 512;
// A kLoop kernel streams its elements one (8, 128) vector register at a time.
constexpr int64_t kLoopTileElements = 8 * 128;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t LargestResult(const ir::Operation& op) {
  int64_t n = 1;
  for (ir::Value v : op.results()) {
    if (v.type().is_tensor()) n = std::max(n, v.type().num_elements());
  }
  return n;
}

// kInput: one tile per reduced row (of a reduce's reduced dimensions; of a
// reduce_window, one window), so that a tile holds whole rows.
int64_t ReductionTiles(const ir::Operation& root) {
  if (root.name_str() == "stablehlo.reduce_window") return LargestResult(root);
  const ir::Type& in = root.operand(0).type();
  if (!in.is_tensor()) return 1;
  int64_t row = 1;
  for (int64_t d : GetIntsOr(root, "dimensions", {})) {
    if (d >= 0 && d < in.rank()) row *= in.dim(d);
  }
  return row > 0 ? in.num_elements() / row : 1;
}

bool IsMatmulOp(const ir::Operation& op) {
  const std::string& n = op.name_str();
  return n == "stablehlo.dot_general" || n == "stablehlo.dot" || n == "stablehlo.convolution";
}

// The tiles the kernel splits its iteration space into, by kind
// (docs/report.md); every value it holds is split evenly over them.
int64_t NumTiles(const ir::Operation& fusion) {
  const ir::Attribute attr = fusion.attr("kind");
  const std::string kind = attr.kind() == ir::Attribute::Kind::kString ? attr.str() : "";
  const ir::Block& body = fusion.region(0).front();
  const ir::Operation* ret = body.terminator();
  const ir::Operation* root =
      ret != nullptr && ret->num_operands() > 0 ? ret->operand(0).defining_op() : nullptr;
  int64_t tiles = CeilDiv(LargestResult(fusion), kLoopTileElements);
  if (kind == "kInput" && root != nullptr && root->num_operands() > 0) {
    tiles = ReductionTiles(*root);
  } else if (kind == "kOutput") {
    for (const auto& op : body.ops()) {
      if (IsMatmulOp(*op)) tiles = CeilDiv(LargestResult(*op), kOutputTileElements);
    }
  }
  return std::max<int64_t>(tiles, 1);
}

// Bytes of `t` in one of `tiles` tiles.
int64_t TileBytes(const ir::Type& t, int64_t tiles) {
  if (!t.is_tensor()) return 0;
  return (CeilDiv(t.num_elements(), tiles) * ir::BitWidth(t.element()) + 7) / 8;
}

// What the kernel reads of operand i: all of it, or, where only
// dynamic_slices read it, their boxes.
std::vector<ir::Type> OperandReads(const ir::Operation& fusion, int i) {
  const ir::Block& body = fusion.region(0).front();
  if (i >= body.num_arguments()) return {fusion.operand(i).type()};
  std::vector<ir::Type> boxes;
  for (const auto& inner : body.ops()) {
    for (int j = 0; j < inner->num_operands(); ++j) {
      if (inner->operand(j) != body.argument(i)) continue;
      if (inner->name_str() != "stablehlo.dynamic_slice" || j != 0) {
        return {fusion.operand(i).type()};
      }
      boxes.push_back(inner->result(0).type());
    }
  }
  return boxes;
}

Work FusionWork(const ir::Operation& op) {
  if (op.num_regions() != 1 || op.region(0).empty()) return ReadsAndWrites(op);
  Work w;
  for (int i = 0; i < op.num_operands(); ++i) {
    for (ir::Type t : OperandReads(op, i)) w.reads.push_back(t);
  }
  for (int i = 0; i < op.num_results(); ++i) w.writes.push_back(op.result(i).type());
  const int64_t tiles = NumTiles(op);
  for (const auto& inner : op.region(0).front().ops()) {
    const OpDef* def = OpRegistry::Lookup(inner->name());
    if (def == nullptr || def->work == nullptr || def->is_terminator) continue;
    const Work inner_work = def->work(*inner);
    if (inner_work.free) continue;  // names a value; holds nothing of its own
    AddCompute(w, inner_work);
    for (ir::Value v : inner->results()) w.onchip_bytes += TileBytes(v.type(), tiles);
  }
  w.onchip_tiles = tiles;
  return w;
}

TPUSIM_REGISTER_OP({.name = "tpusim.fusion", .verify = VerifyFusion, .eval = EvalFusion,
                    .work = FusionWork});

}  // namespace
}  // namespace tpusim::ops

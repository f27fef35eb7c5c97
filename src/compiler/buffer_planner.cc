#include "compiler/buffer_planner.h"

#include <algorithm>
#include <limits>
#include <string>

#include "compiler/best_fit_heap.h"
#include "compiler/host_placement.h"
#include "tpusim/hw/layout.h"
#include "tpusim/ir/rewrite.h"
#include "tpusim/ops/op_def.h"

namespace tpusim::compiler {
namespace {

// How an op's results relate to memory.
enum class Role {
  kConstant,         // program data
  kTuple,            // its result is its operands, grouped
  kGetTupleElement,  // its result is part of its operand
  kForward,          // result i is operand i (optimization_barrier)
  kBitcast,          // its result is its operand's bytes under another type
  kCall,             // runs a function of the module
  kControlFlow,      // runs its regions (while, if, case)
  kCompute,          // writes new buffers
};

const char* CalleeAttr(const ir::Operation& op) {
  if (op.name_str() == "func.call") return "callee";
  if (op.name_str() == "stablehlo.composite") return "decomposition";
  return nullptr;
}

// A free op from one tensor to another of the same stored size moves no
// data (a reshape that keeps the tiles, a same-width bitcast_convert), so
// XLA makes it a bitcast of its operand's buffer.
bool IsBitcast(const ir::Operation& op, const ops::OpDef* def) {
  if (def == nullptr || !def->work || op.num_regions() > 0 || op.num_operands() != 1 ||
      op.num_results() != 1) {
    return false;
  }
  const ir::Type& in = op.operand(0).type();
  const ir::Type& out = op.result(0).type();
  return in.is_tensor() && out.is_tensor() && ops::LogicalBytes(in) == ops::LogicalBytes(out) &&
         hw::PaddedBytes(in) == hw::PaddedBytes(out) && def->work(op).free;
}

// XLA keeps a splat of more than one element as a broadcast of a scalar:
// computed into a temporary where it is needed, not held in the program's
// constants.
bool IsBroadcastSplat(const ir::Operation& op) {
  ir::Attribute value = op.attr("value");
  return value.kind() == ir::Attribute::Kind::kDenseElements && value.is_splat() &&
         op.num_results() == 1 && op.result(0).type().is_tensor() &&
         op.result(0).type().num_elements() > 1;
}

Role RoleOf(const ir::Operation& op) {
  const std::string& name = op.name_str();
  if (name == "stablehlo.constant" || name == "chlo.constant") {
    return IsBroadcastSplat(op) ? Role::kCompute : Role::kConstant;
  }
  if (name == "stablehlo.tuple") return Role::kTuple;
  if (name == "stablehlo.get_tuple_element") return Role::kGetTupleElement;
  if (name == "stablehlo.optimization_barrier") return Role::kForward;
  if (CalleeAttr(op) != nullptr) return Role::kCall;
  const ops::OpDef* def = ops::OpRegistry::Lookup(op.name());
  if (def != nullptr && def->control_flow && op.num_regions() > 0) return Role::kControlFlow;
  if (IsBitcast(op, def)) return Role::kBitcast;
  return Role::kCompute;
}

int LeafCount(const ir::Type& t) {
  if (!t.is_tuple()) return 1;
  int n = 0;
  for (const ir::Type& e : t.tuple_elements()) n += LeafCount(e);
  return n;
}

struct Leaf {
  ir::Type type;
  std::string index;  // "{1,0}" within a tuple, "" for a tensor
};

void Flatten(const ir::Type& t, const std::string& path, std::vector<Leaf>& out) {
  if (!t.is_tuple()) {
    out.push_back({t, path.empty() ? "" : "{" + path + "}"});
    return;
  }
  for (size_t i = 0; i < t.tuple_elements().size(); ++i) {
    Flatten(t.tuple_elements()[i], path + (path.empty() ? "" : ",") + std::to_string(i), out);
  }
}

std::string Where(const ir::Operation& op) {
  return op.loc().known() ? op.name_str() + " at " + op.loc().ToString() : op.name_str();
}

// Largest first, at most MemoryPlan::kMaxLiveListed.
void SortAndCap(std::vector<LiveBuffer>& live) {
  std::stable_sort(live.begin(), live.end(),
                   [](const LiveBuffer& a, const LiveBuffer& b) { return a.bytes > b.bytes; });
  if (live.size() > MemoryPlan::kMaxLiveListed) live.resize(MemoryPlan::kMaxLiveListed);
}

constexpr int kBeforeFirstOp = -1;

// State the loop's body returns as it got it (weights a layer or decode
// loop reads) is never written: XLA's copy insertion leaves it in its
// operand's buffer, whatever reads it later.
bool PassedThrough(const ir::Operation& loop, int i) {
  if (loop.num_regions() < 2 || loop.region(1).num_blocks() != 1) return false;
  const ir::Block& body = loop.region(1).front();
  const ir::Operation* ret = body.terminator();
  return ret != nullptr && i < body.num_arguments() && i < ret->num_operands() &&
         ret->operand(i) == body.argument(i);
}

}  // namespace

StatusOr<const BodyPlan*> ModulePlanner::PlanCallee(const ir::Function& callee) {
  auto it = callees_.find(&callee);
  if (it != callees_.end()) return &it->second;
  if (!in_progress_.insert(&callee).second) {
    return Unimplemented("buffer assignment: @" + callee.name() +
                         " calls itself; recursive programs have no static memory plan");
  }
  FunctionPlanner planner(*this, callee, /*is_entry=*/false);
  Status status = planner.Run();
  in_progress_.erase(&callee);
  TPUSIM_RETURN_IF_ERROR(status);
  return &callees_.emplace(&callee, planner.body()).first->second;
}

Status FunctionPlanner::Run() {
  if (f_.body().num_blocks() != 1) {
    return Unimplemented("buffer assignment: @" + f_.name() + " has " +
                         std::to_string(f_.body().num_blocks()) + " blocks");
  }
  leaves_.assign(f_.num_values(), {});
  host_ = HostPlacedValues(f_);
  scopes_.emplace_back();
  TPUSIM_RETURN_IF_ERROR(PlanBlock(f_.entry(), 0, {}).WithContext("@" + f_.name()));
  const Scope& top = scopes_[0];
  body_.heap = top.heap;
  body_.live_at_peak = top.live_at_peak;
  for (const Buffer& b : buffers_) {
    if (b.chunk || b.bytes == 0 || b.scope < 0) continue;
    body_.sum_of_buffers += b.bytes;
    ++body_.num_buffers;
  }
  return Status::Ok();
}

MemoryPlan FunctionPlanner::Plan(int64_t capacity_bytes) const {
  const Scope& top = scopes_[0];
  MemoryPlan plan;
  plan.function = f_.name();
  plan.capacity_bytes = capacity_bytes;
  plan.peak_bytes = top.heap;
  plan.argument_bytes = top.by_kind[static_cast<int>(BufferKind::kArgument)];
  plan.result_bytes = top.by_kind[static_cast<int>(BufferKind::kResult)];
  plan.constant_bytes = top.by_kind[static_cast<int>(BufferKind::kConstant)];
  plan.temp_bytes = top.by_kind[static_cast<int>(BufferKind::kTemporary)];
  plan.fragmentation_bytes = top.heap - plan.argument_bytes - plan.result_bytes -
                             plan.constant_bytes - plan.temp_bytes;
  plan.max_live_bytes = top.max_live;
  plan.host_bytes = host_bytes_;
  plan.sum_of_buffers = body_.sum_of_buffers;
  plan.num_buffers = body_.num_buffers;
  plan.live_at_peak = top.live_at_peak;
  plan.live_bytes = top.live;
  plan.peak_index = std::max(top.peak_pos, kBeforeFirstOp) + 1;
  if (top.peak_pos == kBeforeFirstOp) {
    plan.peak_at = "the start of @" + f_.name();
  } else if (top.peak_pos >= 0) {
    const ir::Operation& op = *f_.entry().ops()[top.peak_pos];
    plan.peak_at = op.name_str();
    if (op.num_results() > 0) (plan.peak_at += " ") += Name(op.result(0));
    if (op.loc().known()) plan.peak_at += " at " + op.loc().ToString();
  }
  return plan;
}

std::vector<std::pair<int64_t, int64_t>> FunctionPlanner::Placement(ir::Value v) const {
  std::vector<std::pair<int64_t, int64_t>> out;
  if (v.id() < 0 || v.id() >= static_cast<int>(leaves_.size())) return out;
  for (int b : leaves_[v.id()]) {
    if (b < 0) {
      out.push_back({-1, 0});
      continue;
    }
    int target = buffers_[b].redirect >= 0 ? buffers_[b].redirect : b;
    int64_t offset = AbsoluteOffset(target);
    out.push_back({offset, offset < 0 ? 0 : buffers_[target].info.bytes});
  }
  return out;
}

// A scope's block: its ops in order, then its returned values, then
// placement. `returned_into` holds, per tensor the block returns, the
// buffer of the parent op that stores it (empty at the top).
Status FunctionPlanner::PlanBlock(const ir::Block& block, int scope,
                                  const std::vector<int>& returned_into) {
  for (int i = 0; i < block.num_arguments(); ++i) {
    ir::Value arg = block.argument(i);
    if (scope == 0 && is_entry_) {
      TPUSIM_RETURN_IF_ERROR(NewBuffers(arg, BufferKind::kArgument, scope, kBeforeFirstOp));
    } else {
      // A body's parameters are its op's operands or results; a callee's
      // are its caller's operands.
      TPUSIM_ASSIGN_OR_RETURN(std::vector<int>* leaves, LeavesOf(arg));
      leaves->assign(LeafCount(arg.type()), -1);
    }
  }
  const auto& ops = block.ops();
  for (size_t pos = 0; pos < ops.size(); ++pos) {
    TPUSIM_RETURN_IF_ERROR(PlanOp(block, *ops[pos], scope, static_cast<int>(pos)));
  }
  if (block.terminator() != nullptr) MarkReturned(*block.terminator(), scope, returned_into);
  if (scope == 0 && is_entry_) {
    for (const LiveBuffer& c : module_.callee_constants()) {
      buffers_.push_back({.info = c, .bytes = c.bytes, .scope = 0, .start = kBeforeFirstOp,
                          .pinned = true});
      scopes_[0].buffers.push_back(static_cast<int>(buffers_.size()) - 1);
    }
  }
  Place(block, scope);
  return Status::Ok();
}

Status FunctionPlanner::PlanOp(const ir::Block& block, const ir::Operation& op, int scope,
                               int pos) {
  TPUSIM_RETURN_IF_ERROR(ExtendUses(op, scope, pos));
  std::vector<std::vector<int>*> results;
  for (int i = 0; i < op.num_results(); ++i) {
    TPUSIM_ASSIGN_OR_RETURN(std::vector<int>* leaves, LeavesOf(op.result(i)));
    results.push_back(leaves);
  }
  std::vector<int> operands;  // the buffers of every operand, in order
  for (ir::Value v : op.operands()) {
    TPUSIM_ASSIGN_OR_RETURN(std::vector<int>* leaves, LeavesOf(v));
    operands.insert(operands.end(), leaves->begin(), leaves->end());
  }
  const Role role = RoleOf(op);
  switch (role) {
    case Role::kConstant:
      for (int i = 0; i < op.num_results(); ++i) {
        TPUSIM_RETURN_IF_ERROR(NewBuffers(op.result(i), BufferKind::kConstant, scope, pos));
      }
      return Status::Ok();
    case Role::kTuple:
    case Role::kBitcast:
      if (op.num_results() == 1 && static_cast<int>(operands.size()) ==
                                       LeafCount(op.result(0).type())) {
        *results[0] = operands;
        return Status::Ok();
      }
      break;
    case Role::kGetTupleElement: {
      const ir::Type& tuple = op.operand(0).type();
      ir::Attribute index = op.attr("index");
      if (op.num_results() != 1 || !tuple.is_tuple() || index.kind() != ir::Attribute::Kind::kInt ||
          index.int_value() < 0 ||
          index.int_value() >= static_cast<int64_t>(tuple.tuple_elements().size())) {
        return InvalidArgument(Where(op) + ": malformed get_tuple_element");
      }
      int first = 0;
      for (int64_t i = 0; i < index.int_value(); ++i) first += LeafCount(tuple.tuple_elements()[i]);
      int n = LeafCount(tuple.tuple_elements()[index.int_value()]);
      results[0]->assign(operands.begin() + first, operands.begin() + first + n);
      return Status::Ok();
    }
    case Role::kForward:
      if (op.num_results() == op.num_operands()) {
        for (int i = 0; i < op.num_results(); ++i) {
          TPUSIM_ASSIGN_OR_RETURN(std::vector<int>* leaves, LeavesOf(op.operand(i)));
          *results[i] = *leaves;
        }
        return Status::Ok();
      }
      break;
    default:
      break;
  }
  for (int i = 0; i < op.num_results(); ++i) {
    if (op.name_str() == "stablehlo.while" &&
        (PassedThrough(op, i) || UpdatesInPlace(block, op, i, scope, pos))) {
      TPUSIM_ASSIGN_OR_RETURN(std::vector<int> * leaves, LeavesOf(op.operand(i)));
      *results[i] = *leaves;
      continue;
    }
    TPUSIM_RETURN_IF_ERROR(NewBuffers(op.result(i), BufferKind::kTemporary, scope, pos));
  }
  if (role == Role::kCall) return PlanCall(op, scope, pos);
  if (role == Role::kControlFlow) return PlanBodies(op, scope, pos);
  return Status::Ok();
}

// A while loop updates its state in place, as XLA's does: result i takes
// operand i's buffer when that is a temporary of this scope that nothing
// reads after the loop (otherwise XLA would copy it first).
bool FunctionPlanner::UpdatesInPlace(const ir::Block& block, const ir::Operation& loop, int i,
                                     int scope, int pos) {
  const ir::Value v = loop.operand(i);
  StatusOr<std::vector<int>*> leaves = LeavesOf(v);
  if (!leaves.ok() || (*leaves)->size() != 1) return false;
  const int b = (**leaves)[0];
  if (b < 0 || buffers_[b].scope != scope || buffers_[b].pinned ||
      buffers_[b].info.kind != BufferKind::kTemporary) {
    return false;
  }
  for (int j = 0; j < loop.num_operands(); ++j) {
    if (j != i && loop.operand(j) == v) return false;  // the state twice
  }
  bool read_later = false;
  auto reads = [&](const ir::Operation& user) {
    for (ir::Value u : user.operands()) read_later |= u == v;
  };
  const auto& ops = block.ops();
  for (size_t later = static_cast<size_t>(pos) + 1; later < ops.size() && !read_later; ++later) {
    reads(*ops[later]);
    for (int r = 0; r < ops[later]->num_regions(); ++r) {
      ir::Walk(ops[later]->region(r), [&](ir::Operation& inner) { reads(inner); });
    }
  }
  return !read_later;
}

// Each region runs while the op does, one at a time: the op holds the
// largest region's heap as one temporary. The regions' returned values are
// the op's results (a while's condition returns its own predicate).
Status FunctionPlanner::PlanBodies(const ir::Operation& op, int scope, int pos) {
  BodyPlan largest;
  std::vector<int> regions;  // their scopes
  for (int r = 0; r < op.num_regions(); ++r) {
    const ir::Region& region = op.region(r);
    if (region.empty()) continue;
    if (region.num_blocks() != 1) {
      return Unimplemented(Where(op) + ": buffer assignment of a region with " +
                           std::to_string(region.num_blocks()) + " blocks");
    }
    bool condition = op.name_str() == "stablehlo.while" && r == 0;
    int s = static_cast<int>(scopes_.size());
    scopes_.emplace_back();
    regions.push_back(s);
    TPUSIM_RETURN_IF_ERROR(
        PlanBlock(region.front(), s, condition ? std::vector<int>{} : ResultLeaves(op)));
    if (scopes_[s].heap > largest.heap) {
      largest.heap = scopes_[s].heap;
      largest.live_at_peak = scopes_[s].live_at_peak;
    }
  }
  if (largest.heap == 0) return Status::Ok();
  int chunk = AddChunk(op, scope, pos, largest);
  for (int s : regions) scopes_[s].chunk = chunk;
  return Status::Ok();
}

Status FunctionPlanner::PlanCall(const ir::Operation& op, int scope, int pos) {
  ir::Attribute callee = op.attr(CalleeAttr(op));
  const ir::Function* f = callee.kind() == ir::Attribute::Kind::kSymbolRef
                              ? module_.module().Lookup(callee.str())
                              : nullptr;
  if (f == nullptr) return InvalidArgument(Where(op) + ": calls an unknown function");
  TPUSIM_ASSIGN_OR_RETURN(const BodyPlan* plan, module_.PlanCallee(*f));
  // Each call writes its own temporaries; the callee's constants are the
  // entry's (callee_constants), counted once.
  body_.sum_of_buffers += plan->sum_of_buffers;
  body_.num_buffers += plan->num_buffers;
  if (plan->heap > 0) AddChunk(op, scope, pos, *plan);
  return Status::Ok();
}

// Every value `op` reads, in its regions too, lives at least until `pos`.
Status FunctionPlanner::ExtendUses(const ir::Operation& op, int scope, int pos) {
  Status status;
  auto extend = [&](const ir::Operation& user) {
    for (ir::Value v : user.operands()) {
      StatusOr<std::vector<int>*> leaves = LeavesOf(v);
      if (!leaves.ok()) {
        status = leaves.status();
        return;
      }
      for (int b : **leaves) {
        if (b >= 0 && buffers_[b].scope == scope) buffers_[b].end = std::max(buffers_[b].end, pos);
      }
    }
  };
  extend(op);
  for (int r = 0; r < op.num_regions(); ++r) {
    ir::Walk(op.region(r), [&](ir::Operation& inner) { extend(inner); });
  }
  return status;
}

// JAX's donated arguments (donate_argnums): `tf.aliasing_output = i` on an
// argument gives its buffer to result i, which XLA writes in place.
int FunctionPlanner::DonatedBuffer(size_t result) const {
  for (size_t k = 0; k < f_.arg_attrs().size(); ++k) {
    ir::Attribute alias = f_.arg_attrs()[k].Get("tf.aliasing_output");
    if (alias.kind() != ir::Attribute::Kind::kInt ||
        alias.int_value() != static_cast<int64_t>(result)) {
      continue;
    }
    const std::vector<int>& leaves = leaves_[f_.entry().argument(static_cast<int>(k)).id()];
    return leaves.size() == 1 ? leaves[0] : -1;
  }
  return -1;
}

// The entry's returned values live to the end; a body's are stored in its
// op's results, so they take no space of their own.
void FunctionPlanner::MarkReturned(const ir::Operation& ret, int scope,
                                   const std::vector<int>& returned_into) {
  bool top = scope == 0 && is_entry_;
  size_t i = 0;
  for (ir::Value v : ret.operands()) {
    StatusOr<std::vector<int>*> leaves = LeavesOf(v);
    if (!leaves.ok()) return;  // reported by ExtendUses
    for (int b : **leaves) {
      size_t into = i++;
      if (b < 0 || buffers_[b].scope != scope || buffers_[b].info.kind != BufferKind::kTemporary) {
        continue;
      }
      if (top) {
        if (const int donor = DonatedBuffer(into);
            donor >= 0 && buffers_[donor].bytes == buffers_[b].bytes) {
          buffers_[b].bytes = 0;
          buffers_[b].redirect = donor;
          continue;
        }
        buffers_[b].info.kind = BufferKind::kResult;
        buffers_[b].pinned = true;
      } else {
        buffers_[b].bytes = 0;
        if (into < returned_into.size()) buffers_[b].redirect = returned_into[into];
      }
    }
  }
}

// Places the scope's buffers twice (best_fit_heap.h) and keeps the smaller
// heap.
void FunctionPlanner::Place(const ir::Block& block, int scope) {
  Scope& sc = scopes_[scope];
  const int n = static_cast<int>(block.ops().size());
  std::vector<int> ids;
  std::vector<LiveRange> ranges;
  for (int b : sc.buffers) {
    const Buffer& buf = buffers_[b];
    if (buf.bytes == 0) continue;
    ids.push_back(b);
    ranges.push_back({.bytes = buf.bytes, .start = buf.start, .end = buf.pinned ? n : buf.end});
  }
  HeapPlacement in_order = PlaceInProgramOrder(ranges);
  HeapPlacement by_size = PlaceLargestFirst(ranges);
  const HeapPlacement& best = by_size.size < in_order.size ? by_size : in_order;
  sc.heap = best.size;
  std::vector<int64_t> live(n + 2, 0);  // bytes live at each step + 1
  for (size_t i = 0; i < ids.size(); ++i) {
    buffers_[ids[i]].offset = best.offsets[i];
    live[ranges[i].start + 1] += ranges[i].bytes;  // differences, summed below
    if (ranges[i].end + 1 < n) live[ranges[i].end + 2] -= ranges[i].bytes;
  }
  for (int t = 1; t <= n; ++t) live[t] += live[t - 1];
  sc.max_live = *std::max_element(live.begin(), live.end());
  sc.live.assign(live.begin(), live.begin() + n + 1);
  // The peak: of the steps where a buffer reaching the heap's top is live,
  // the one with the most bytes live (the fewest holes), the first of equals.
  for (size_t i = 0; i < ids.size(); ++i) {
    if (best.offsets[i] + ranges[i].bytes != sc.heap) continue;
    for (int t = ranges[i].start; t <= std::min(ranges[i].end, n - 1); ++t) {
      if (sc.peak_pos < kBeforeFirstOp || live[t + 1] > live[sc.peak_pos + 1] ||
          (live[t + 1] == live[sc.peak_pos + 1] && t < sc.peak_pos)) {
        sc.peak_pos = t;
      }
    }
  }
  for (int b : sc.buffers) {
    const Buffer& buf = buffers_[b];
    if (buf.bytes == 0 || buf.start > sc.peak_pos || (!buf.pinned && buf.end < sc.peak_pos)) {
      continue;
    }
    sc.by_kind[static_cast<int>(buf.info.kind)] += buf.bytes;
    if (!buf.chunk) sc.live_at_peak.push_back(buf.info);
  }
  for (int b : sc.buffers) {
    const Buffer& buf = buffers_[b];
    if (buf.chunk && buf.start == sc.peak_pos) {
      sc.live_at_peak.insert(sc.live_at_peak.end(), buf.inner.begin(), buf.inner.end());
    }
  }
  SortAndCap(sc.live_at_peak);
}

Status FunctionPlanner::NewBuffers(ir::Value v, BufferKind kind, int scope, int pos) {
  std::vector<Leaf> leaves;
  Flatten(v.type(), "", leaves);
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int>* slot, LeavesOf(v));
  std::vector<int>& ids = *slot;
  ids.clear();
  std::string op = v.is_block_argument() ? "parameter " + std::to_string(v.index())
                                         : Where(*v.defining_op());
  if (host_[v.id()]) {
    // No HBM. The entry's own host buffers are counted once: a loop or an
    // update in place writes into one that exists.
    const ir::Operation* def = v.defining_op();
    const bool in_place = def != nullptr && (def->name_str() == "stablehlo.while" ||
                                             def->name_str() == "stablehlo.dynamic_update_slice");
    for (const Leaf& leaf : leaves) {
      ids.push_back(-1);
      if (scope == 0 && is_entry_ && !in_place) host_bytes_ += hw::PaddedBytes(leaf.type);
    }
    return Status::Ok();
  }
  for (const Leaf& leaf : leaves) {
    int64_t bytes = hw::PaddedBytes(leaf.type);
    if (bytes == 0) {
      ids.push_back(-1);
      continue;
    }
    Buffer b{.info = {.value = Name(v) + leaf.index, .type = leaf.type.ToString(), .op = op,
                      .kind = kind, .bytes = bytes},
             .bytes = bytes, .scope = scope, .start = pos, .end = pos};
    if (kind == BufferKind::kArgument || kind == BufferKind::kConstant) {
      b.start = kBeforeFirstOp;
      b.pinned = true;
    }
    if (kind == BufferKind::kConstant) {
      if (!is_entry_) {
        module_.callee_constants().push_back(b.info);
        b.scope = -1;
      } else {
        b.scope = 0;
      }
    }
    buffers_.push_back(std::move(b));
    ids.push_back(static_cast<int>(buffers_.size()) - 1);
    if (buffers_.back().scope >= 0) scopes_[buffers_.back().scope].buffers.push_back(ids.back());
  }
  return Status::Ok();
}

int FunctionPlanner::AddChunk(const ir::Operation& op, int scope, int pos, const BodyPlan& body) {
  std::string what = op.num_results() > 0 ? Name(op.result(0)) : op.name_str();
  Buffer b{.info = {.value = what, .op = "temporaries of " + Where(op),
                    .kind = BufferKind::kTemporary, .bytes = body.heap},
           .bytes = body.heap, .scope = scope, .start = pos, .end = pos, .chunk = true,
           .inner = body.live_at_peak};
  buffers_.push_back(std::move(b));
  int id = static_cast<int>(buffers_.size()) - 1;
  scopes_[scope].buffers.push_back(id);
  return id;
}

StatusOr<std::vector<int>*> FunctionPlanner::LeavesOf(ir::Value v) {
  if (v.id() < 0 || v.id() >= static_cast<int>(leaves_.size())) {
    return Internal("buffer assignment: value ids of @" + f_.name() +
                    " are stale (Function::Renumber was not called)");
  }
  return &leaves_[v.id()];
}

std::vector<int> FunctionPlanner::ResultLeaves(const ir::Operation& op) const {
  std::vector<int> out;
  for (int i = 0; i < op.num_results(); ++i) {
    const std::vector<int>& leaves = leaves_[op.result(i).id()];
    out.insert(out.end(), leaves.begin(), leaves.end());
  }
  return out;
}

int64_t FunctionPlanner::AbsoluteOffset(int buffer) const {
  const Buffer& b = buffers_[buffer];
  if (b.bytes == 0 || b.offset < 0) return -1;
  int chunk = b.scope > 0 ? scopes_[b.scope].chunk : -1;
  if (chunk < 0) return b.offset;
  int64_t base = AbsoluteOffset(chunk);
  return base < 0 ? -1 : base + b.offset;
}

std::string FunctionPlanner::Name(ir::Value v) const {
  // The program's own name for the value, as the report's other sections
  // give it; a value the compiler made has none and is numbered.
  // Appends rather than `"%" + ...`, which GCC 12 misreads (-Wrestrict).
  std::string name = "%";
  const ir::Operation* op = v.defining_op();
  if (!v.name().empty()) {
    name += v.name();
  } else if (op != nullptr && op->num_results() > 1) {
    name += std::to_string(op->result(0).id());
    name += "#";
    name += std::to_string(v.index());
  } else {
    if (v.is_block_argument()) name += "arg";
    name += std::to_string(v.id());
  }
  if (!is_entry_) name += " in @" + f_.name();
  return name;
}

}  // namespace tpusim::compiler

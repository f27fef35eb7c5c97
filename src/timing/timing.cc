#include "tpusim/timing/timing.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tpusim/ir/rewrite.h"
#include "tpusim/ops/custom_call.h"
#include "tpusim/ops/op_def.h"

namespace tpusim::timing {

hw::OpCost PriceOp(const hw::ChipSpec& chip, const ir::Operation& op, const ops::EvalOptions& eval,
                   pod::CollectivePricer* pod, bool* priced) {
  const ops::OpDef* def = ops::OpRegistry::Lookup(op.name());
  *priced = def != nullptr && def->work != nullptr;
  if (!*priced) return hw::OpCost{};
  ops::Work work = def->work(op);
  if (work.unpriced) {
    *priced = false;
    return hw::OpCost{};
  }
  std::optional<pod::CollectiveCost> collective;
  if (work.collective) {
    // Priced on a slice; without one (or on groups it cannot hold), unpriced.
    *priced = false;
    if (pod == nullptr) return hw::OpCost{};
    StatusOr<pod::CollectiveCost> cost = pod->Price(op, *work.collective);
    if (!cost.ok()) return hw::OpCost{};
    *priced = true;
    collective = *cost;
  }
  if (eval.override_precision) {
    for (ops::MatmulWork& mm : work.matmuls) {
      if (mm.lhs == ir::ElementType::kF32 || mm.rhs == ir::ElementType::kF32) {
        mm.passes = numerics::NumPasses(eval.precision);
      }
    }
  }
  hw::OpCost c = hw::PriceWork(chip, work, collective ? collective->seconds : 0);
  if (collective) {
    c.ici_bytes = collective->ici_bytes;
    c.dcn_bytes = collective->dcn_bytes;
    c.dcn_seconds = collective->dcn_seconds;
    c.ici_link_loads = collective->link_loads;
    c.ici_link_scale = collective->link_scale;
    for (size_t a = 0; a < collective->axis_seconds.size() && a < 3; ++a) {
      c.ici_axis_seconds[a] = collective->axis_seconds[a];
    }
  }
  return c;
}

namespace {

// A custom call runs code tpusim does not have: its price is a known
// kernel's algorithm or else only its operand and result traffic. Says which
// once per target.
void NoteCustomCall(const ir::Operation& op, Timeline* timeline) {
  if (op.name_str() != "stablehlo.custom_call") return;
  ir::Attribute target = op.attr("call_target_name");
  if (target.kind() != ir::Attribute::Kind::kString || target.str().rfind("check.", 0) == 0) {
    return;
  }
  const std::string prefix = "custom-call '" + target.str() + "' ";
  for (const std::string& note : timeline->notes()) {
    if (note.rfind(prefix, 0) == 0) return;
  }
  const ops::OpDef* def = ops::OpRegistry::Lookup(op.name());
  if (def == nullptr || def->work == nullptr) return;
  ops::Work work = def->work(op);
  if (work.free) return;  // a partitioner's marker, not foreign code
  const std::string at = prefix + "at " + op.loc().ToString();
  if (work.host_bytes > 0 && timeline->chip().host.bytes_per_s <= 0) {
    timeline->AddNote(at + " moves " + std::to_string(work.host_bytes) +
                      " bytes over the host link, which this chip model lacks: priced as free");
  }
  // Targets tpusim evaluates (LAPACK's, ...) have values; others only a time.
  const ops::CustomCallDef* known = ops::CustomCallRegistry::Lookup(target.str());
  const std::string values = known != nullptr && known->eval ? "" : "; it has no values";
  if (!work.priced_as.empty()) {
    timeline->AddNote(at + " priced as " + work.priced_as + ": " + std::to_string(work.flops) +
                      " FLOP" + values);
    return;
  }
  timeline->AddNote(at + " timed from its shapes (reads " + std::to_string(work.bytes_read()) +
                    " bytes, writes " + std::to_string(work.bytes_written()) +
                    " bytes)" + values);
}

}  // namespace

void TimingObserver::OnOp(const ir::Operation& op, std::span<const Tensor>,
                          std::span<const Tensor>) {
  bool priced;
  hw::OpCost cost = PriceOp(timeline_->chip(), op, eval_, pod_, &priced);
  timeline_->Append(op, cost, priced);
  NoteCustomCall(op, timeline_);
}

namespace {

// The integer value of a scalar constant, looking through nothing else.
std::optional<int64_t> ConstantInt(ir::Value v) {
  const ir::Operation* def = v.defining_op();
  if (def == nullptr || def->name_str() != "stablehlo.constant") return std::nullopt;
  std::vector<int64_t> ints = def->attr("value").AsInts();
  if (ints.size() != 1) return std::nullopt;
  return ints[0];
}

// Iterations of `for (i = init; i <dir> bound; i += step)`; dir as written
// with i on the left.
std::optional<int64_t> CountedTrips(const std::string& dir, int64_t init, int64_t bound,
                                    int64_t step) {
  auto ceil_div = [](int64_t a, int64_t b) { return a <= 0 ? 0 : (a + b - 1) / b; };
  if (step > 0 && dir == "LT") return ceil_div(bound - init, step);
  if (step > 0 && dir == "LE") return ceil_div(bound - init + 1, step);
  if (step < 0 && dir == "GT") return ceil_div(init - bound, -step);
  if (step < 0 && dir == "GE") return ceil_div(init - bound + 1, -step);
  if (step != 0 && dir == "NE" && (bound - init) % step == 0 && (bound - init) / step >= 0) {
    return (bound - init) / step;
  }
  return std::nullopt;
}

std::string Flip(const std::string& dir) {
  if (dir == "LT") return "GT";
  if (dir == "GT") return "LT";
  if (dir == "LE") return "GE";
  if (dir == "GE") return "LE";
  return dir;
}

// The constant step of block argument `i` in the body: return(add(arg_i, c)).
std::optional<int64_t> BodyStep(const ir::Block& body, int i) {
  const ir::Operation* ret = body.terminator();
  if (ret == nullptr || i >= ret->num_operands()) return std::nullopt;
  const ir::Operation* next = ret->operand(i).defining_op();
  if (next == nullptr || next->num_operands() != 2) return std::nullopt;
  const bool add = next->name_str() == "stablehlo.add";
  if (!add && next->name_str() != "stablehlo.subtract") return std::nullopt;
  ir::Value arg = body.argument(i);
  for (int side = 0; side < 2; ++side) {
    if (next->operand(side) != arg) continue;
    if (side == 1 && !add) return std::nullopt;  // c - i does not count
    std::optional<int64_t> c = ConstantInt(next->operand(1 - side));
    if (!c) return std::nullopt;
    return add ? *c : -*c;
  }
  return std::nullopt;
}

}  // namespace

std::optional<int64_t> InferTripCount(const ir::Operation& w) {
  if (w.num_regions() != 2 || w.region(0).empty() || w.region(1).empty()) return std::nullopt;
  const ir::Block& cond = w.region(0).front();
  const ir::Operation* ret = cond.terminator();
  if (ret == nullptr || ret->num_operands() != 1) return std::nullopt;
  const ir::Operation* cmp = ret->operand(0).defining_op();
  if (cmp == nullptr || cmp->name_str() != "stablehlo.compare") return std::nullopt;
  ir::Attribute dir_attr = cmp->attr("comparison_direction");
  if (dir_attr.kind() != ir::Attribute::Kind::kEnum) return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    ir::Value v = cmp->operand(side);
    if (!v.is_block_argument() || v.impl()->block != &cond) continue;
    int i = v.index();
    std::optional<int64_t> bound = ConstantInt(cmp->operand(1 - side));
    std::optional<int64_t> init = ConstantInt(w.operand(i));
    std::optional<int64_t> step = BodyStep(w.region(1).front(), i);
    if (!bound || !init || !step) continue;
    std::string dir = side == 0 ? dir_attr.str() : Flip(dir_attr.str());
    if (auto n = CountedTrips(dir, *init, *bound, *step)) return n;
  }
  return std::nullopt;
}

namespace {

bool DefinedIn(ir::Value v, const ir::Block& block) {
  return v.is_block_argument() ? v.impl()->block == &block : v.defining_op()->parent() == &block;
}

// The ops of a while loop's body whose collectives XLA's collective
// pipeliner takes out of the iteration's critical path: those that read
// only values that do not depend on the iteration before (the state the
// body passes through unchanged, its induction variable, returned as itself
// plus a constant, values from outside the loop, and what is computed from
// those alone), started one iteration early; and those whose results only
// flow into the state the body returns (a gradient's reduce-scatter into
// its accumulator), finished one iteration late.
std::unordered_set<const ir::Operation*> Pipelinable(const ir::Operation& loop) {
  std::unordered_set<const void*> free;
  std::unordered_set<const ir::Operation*> out;
  const ir::Block& body = loop.region(1).front();
  const ir::Operation* ret = body.terminator();
  if (ret == nullptr) return out;
  auto is_constant = [](ir::Value v) {
    return v.defining_op() != nullptr && v.defining_op()->name_str() == "stablehlo.constant";
  };
  for (int k = 0; k < body.num_arguments() && k < ret->num_operands(); ++k) {
    const ir::Value arg = body.argument(k);
    const ir::Value next = ret->operand(k);
    const ir::Operation* step = next.defining_op();
    const bool induction = step != nullptr && step->name_str() == "stablehlo.add" &&
                           step->num_operands() == 2 &&
                           ((step->operand(0) == arg && is_constant(step->operand(1))) ||
                            (step->operand(1) == arg && is_constant(step->operand(0))));
    if (next == arg || induction) free.insert(arg.impl());
  }
  for (const auto& op : body.ops()) {
    bool depends = false;
    for (ir::Value v : op->operands()) {
      depends = depends || (DefinedIn(v, body) && !free.count(v.impl()));
    }
    if (!depends) {
      for (ir::Value r : op->results()) free.insert(r.impl());
      out.insert(op.get());
    }
  }
  // Backwards: an op whose every user is the terminator or such an op (a
  // use inside an op's regions is that op's).
  std::unordered_map<const void*, std::vector<const ir::Operation*>> users;
  for (const auto& op : body.ops()) {
    const ir::Operation* user = op.get();
    auto uses = [&](const ir::Operation& o) {
      for (ir::Value v : o.operands()) users[v.impl()].push_back(user);
    };
    uses(*op);
    for (int r = 0; r < op->num_regions(); ++r) ir::Walk(op->region(r), uses);
  }
  std::unordered_set<const ir::Operation*> to_state = {ret};
  for (auto it = body.ops().rbegin(); it != body.ops().rend(); ++it) {
    const ir::Operation* op = it->get();
    if (op == ret || op->num_results() == 0) continue;
    bool only = true;
    for (ir::Value r : op->results()) {
      for (const ir::Operation* user : users[r.impl()]) only = only && to_state.count(user);
    }
    if (only) {
      to_state.insert(op);
      out.insert(op);
    }
  }
  return out;
}

// Walks a function's IR with shapes only, appending each op's price.
class StaticWalker {
 public:
  StaticWalker(const ir::Module& module, const StaticOptions& options, Timeline* timeline)
      : module_(module), options_(options), timeline_(timeline) {}

  Status Function(std::string_view name, int64_t count, int depth) {
    const ir::Function* f = module_.Lookup(name);
    if (f == nullptr) return NotFound("no function @" + std::string(name));
    if (depth > 256) return ResourceExhausted("call depth exceeds 256 at @" + std::string(name));
    return Block(f->entry(), count, depth + 1);
  }

 private:
  // `pipelinable`: for a loop's body, the ops Pipelinable finds.
  Status Block(const ir::Block& block, int64_t count, int depth,
               const std::unordered_set<const ir::Operation*>* pipelinable = nullptr) {
    for (const auto& op : block.ops()) {
      const ops::OpDef* def = ops::OpRegistry::Lookup(op->name());
      if (def != nullptr && def->is_terminator) continue;
      const bool pipelined = pipelinable != nullptr && count > 1 && pipelinable->count(op.get());
      TPUSIM_RETURN_IF_ERROR(Op(*op, def, count, depth, pipelined));
    }
    return Status::Ok();
  }

  Status Op(const ir::Operation& op, const ops::OpDef* def, int64_t count, int depth,
            bool pipelined = false) {
    if (def != nullptr && def->work != nullptr) {
      if (std::string error = def->work(op).error; !error.empty()) {
        return Unimplemented(error).WithLocation(op.loc().ToString());
      }
    }
    bool priced;
    hw::OpCost cost = PriceOp(timeline_->chip(), op, options_.eval, options_.pod, &priced);
    timeline_->Append(op, cost, priced, count, pipelined);
    NoteCustomCall(op, timeline_);
    if (op.name_str() == "func.call") {
      return Function(op.attr("callee").str(), count, depth);
    }
    if (def == nullptr || !def->control_flow) return Status::Ok();
    if (op.name_str() == "stablehlo.while") return While(op, count, depth);
    if (op.num_regions() == 1) return Block(op.region(0).front(), count, depth);
    return CostliestBranch(op, count, depth);
  }

  Status While(const ir::Operation& op, int64_t count, int depth) {
    std::optional<int64_t> trips = InferTripCount(op);
    std::string where = op.loc().ToString();
    if (!trips) {
      if (!options_.default_trip_count) {
        return InvalidArgument("cannot infer the trip count of this while loop in "
                               "timing-only mode; give one with --trip-count N")
            .WithLocation(where);
      }
      trips = options_.default_trip_count;
      timeline_->AddNote("while at " + where + ": trip count " + std::to_string(*trips) +
                         " as given");
    } else {
      timeline_->AddNote("while at " + where + ": " + std::to_string(*trips) +
                         " iterations inferred");
    }
    TPUSIM_RETURN_IF_ERROR(Block(op.region(0).front(), count * (*trips + 1), depth));
    const std::unordered_set<const ir::Operation*> pipelinable = Pipelinable(op);
    return Block(op.region(1).front(), count * *trips, depth, &pipelinable);
  }

  // if/case without values: time every branch alone, keep the dearest.
  Status CostliestBranch(const ir::Operation& op, int64_t count, int depth) {
    int best = -1;
    double best_s = -1;
    for (int r = 0; r < op.num_regions(); ++r) {
      Timeline trial(timeline_->chip());
      StaticWalker sub(module_, options_, &trial);
      TPUSIM_RETURN_IF_ERROR(sub.Block(op.region(r).front(), 1, depth));
      if (trial.total_seconds() > best_s) {
        best_s = trial.total_seconds();
        best = r;
      }
    }
    if (best < 0) return Status::Ok();
    timeline_->AddNote(op.name_str() + " at " + op.loc().ToString() + ": timed branch " +
                       std::to_string(best) + " of " + std::to_string(op.num_regions()) +
                       ", the costliest (no values to choose by)");
    return Block(op.region(best).front(), count, depth);
  }

  const ir::Module& module_;
  const StaticOptions& options_;
  Timeline* timeline_;
};

}  // namespace

StatusOr<Timeline> TimeStatically(const ir::Module& module, std::string_view function,
                                  const hw::ChipSpec& chip, const StaticOptions& options) {
  Timeline timeline(chip, options.overlap, options.pod ? &options.pod->slice() : nullptr);
  StaticWalker walker(module, options, &timeline);
  TPUSIM_RETURN_IF_ERROR(walker.Function(function, 1, 0));
  return timeline;
}

}  // namespace tpusim::timing

// Latency-hiding scheduling: reorders the ops of every block so that a
// collective starts as soon as its operands allow and compute that does not
// wait for it runs while it is in flight, as XLA's latency-hiding scheduler
// does for TPUs. The timeline (timing/timeline.h) then overlaps what the
// order lets overlap.
//
// A list scheduler over each block's dependences: SSA uses (uses inside an
// op's regions count as the op's), and the program order of ops with side
// effects, which stays as written (collectives among them, so every device
// of an SPMD program still meets its peers in the same order). Each op's
// time is the chip model's estimate of its work; a collective's is its bytes
// over one ICI link (the slice is not known at compile time). At each step
// the ready op that can start first runs: a collective when the links are
// free, any other op when the core is; ties go to collectives, then to
// program order. Values are unchanged: only independent ops move.
#include <algorithm>
#include <queue>
#include <unordered_map>
#include <vector>

#include "tpusim/compiler/pass.h"
#include "tpusim/hw/cost_model.h"
#include "tpusim/ir/rewrite.h"
#include "tpusim/ops/op_def.h"

namespace tpusim::compiler {
namespace {

struct Node {
  std::unique_ptr<ir::Operation> op;
  double seconds = 0;
  bool collective = false;
  std::vector<size_t> users;  // nodes that must follow this one
  int waiting_for = 0;        // unscheduled nodes this one must follow
  double ready_s = 0;         // when its last predecessor ends
};

class BlockScheduler {
 public:
  BlockScheduler(const ir::Module& module, const hw::ChipSpec& chip)
      : module_(module), chip_(chip) {}

  void Run(ir::Region& region) {
    for (int b = 0; b < region.num_blocks(); ++b) Schedule(region.block(b));
  }

 private:
  void Schedule(ir::Block& block) {
    std::vector<std::unique_ptr<ir::Operation>> ops = block.TakeOps();
    std::unique_ptr<ir::Operation> terminator;
    if (!ops.empty() && ops.back()->num_regions() == 0 && IsTerminator(*ops.back())) {
      terminator = std::move(ops.back());
      ops.pop_back();
    }
    std::vector<Node> nodes(ops.size());
    for (size_t i = 0; i < ops.size(); ++i) {
      for (int r = 0; r < ops[i]->num_regions(); ++r) Run(ops[i]->region(r));
      nodes[i].op = std::move(ops[i]);
      Estimate(nodes[i]);
    }
    Link(nodes);
    for (size_t i : Order(nodes)) block.Append(std::move(nodes[i].op));
    if (terminator) block.Append(std::move(terminator));
  }

  static bool IsTerminator(const ir::Operation& op) {
    const ops::OpDef* def = ops::OpRegistry::Lookup(op.name());
    return def != nullptr && def->is_terminator;
  }

  void Estimate(Node& n) const {
    const ops::OpDef* def = ops::OpRegistry::Lookup(n.op->name());
    if (def == nullptr || def->work == nullptr) return;
    ops::Work work = def->work(*n.op);
    if (work.unpriced) return;
    if (work.collective) {
      n.collective = true;
      n.seconds = static_cast<double>(work.collective->bytes) / chip_.ici.link_bytes_per_s;
      return;
    }
    n.seconds = hw::PriceWork(chip_, work).seconds;
  }

  // Edges from each op's producers in this block and from the previous op
  // with side effects.
  void Link(std::vector<Node>& nodes) const {
    std::unordered_map<const ir::Operation*, size_t> index;
    for (size_t i = 0; i < nodes.size(); ++i) index[nodes[i].op.get()] = i;
    size_t last_effect = nodes.size();
    for (size_t i = 0; i < nodes.size(); ++i) {
      std::vector<size_t> preds;
      auto use = [&](const ir::Value& v) {
        auto it = index.find(v.defining_op());
        if (it != index.end() && it->second != i) preds.push_back(it->second);
      };
      for (const ir::Value& v : nodes[i].op->operands()) use(v);
      for (int r = 0; r < nodes[i].op->num_regions(); ++r) {
        ir::Walk(nodes[i].op->region(r), [&](ir::Operation& inner) {
          for (const ir::Value& v : inner.operands()) use(v);
        });
      }
      if (ops::HasSideEffects(*nodes[i].op, &module_)) {
        if (last_effect < nodes.size()) preds.push_back(last_effect);
        last_effect = i;
      }
      std::sort(preds.begin(), preds.end());
      preds.erase(std::unique(preds.begin(), preds.end()), preds.end());
      for (size_t p : preds) nodes[p].users.push_back(i);
      nodes[i].waiting_for = static_cast<int>(preds.size());
    }
  }

  // Ready nodes of one kind, the one ready first (then first in program
  // order) on top.
  using Ready = std::priority_queue<std::pair<double, size_t>,
                                    std::vector<std::pair<double, size_t>>, std::greater<>>;

  static std::vector<size_t> Order(std::vector<Node>& nodes) {
    Ready ready[2];  // [0]: compute, [1]: collectives
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (nodes[i].waiting_for == 0) ready[nodes[i].collective].push({0.0, i});
    }
    double free_s[2] = {0, 0};  // when the core and the links are next free
    std::vector<size_t> order;
    while (!ready[0].empty() || !ready[1].empty()) {
      int pick = ready[0].empty() ? 1 : 0;
      if (!ready[0].empty() && !ready[1].empty()) {
        const double compute = std::max(ready[0].top().first, free_s[0]);
        const double collective = std::max(ready[1].top().first, free_s[1]);
        pick = collective <= compute ? 1 : 0;
      }
      const size_t i = ready[pick].top().second;
      ready[pick].pop();
      Node& n = nodes[i];
      const double end = std::max(n.ready_s, free_s[pick]) + n.seconds;
      free_s[pick] = end;
      order.push_back(i);
      for (size_t u : n.users) {
        nodes[u].ready_s = std::max(nodes[u].ready_s, end);
        if (--nodes[u].waiting_for == 0) ready[nodes[u].collective].push({nodes[u].ready_s, u});
      }
    }
    return order;
  }

  const ir::Module& module_;
  const hw::ChipSpec& chip_;
};

}  // namespace

Status RunLatencyHidingScheduler(ir::Module& module, PassContext& ctx) {
  BlockScheduler scheduler(module, *ctx.chip);
  for (const auto& f : module.functions()) {
    scheduler.Run(f->body());
    f->Renumber();
  }
  return Status::Ok();
}

}  // namespace tpusim::compiler

// Memory scheduling: moves each op that shrinks a value up to just after
// the ops it depends on, so the large value it reads dies early, as XLA's
// memory-minimizing scheduler orders a program before buffer assignment.
//
// The case that decides what fits: under FSDP every layer's weight gradient
// is computed whole on each device (a partial sum over its batch shard) and
// then reduce-scattered to the device's shard. Written in program order the
// reduce-scatters come last, after every gradient of the layer, so all the
// whole-size partial sums live at once; hoisted, one does at a time.
//
// An op is hoisted when it is the only user, in its block, of a value
// defined there that is larger than the op's results. It never moves above
// an op it depends on (its operands, and the values its regions read), nor,
// when it has side effects, above an op whose side effects are other than
// collectives: collectives among themselves may move, since every device
// runs the same order. Values are unchanged.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tpusim/compiler/pass.h"
#include "tpusim/ir/rewrite.h"
#include "tpusim/ops/op_def.h"
#include "tpusim/ops/work.h"

namespace tpusim::compiler {
namespace {

int64_t ResultBytes(const ir::Operation& op) {
  int64_t bytes = 0;
  for (ir::Value r : op.results()) bytes += ops::LogicalBytes(r.type());
  return bytes;
}

// Every value `op` reads, those of its regions' ops included.
std::vector<ir::Value> ValuesRead(const ir::Operation& op) {
  std::vector<ir::Value> read(op.operands().begin(), op.operands().end());
  for (int r = 0; r < op.num_regions(); ++r) {
    ir::Walk(op.region(r), [&](const ir::Operation& inner) {
      read.insert(read.end(), inner.operands().begin(), inner.operands().end());
    });
  }
  return read;
}

bool IsCollective(const ir::Operation& op, const ops::OpDef& def) {
  return def.work && def.work(op).collective.has_value();
}

// Whether every side effect of `op`, its regions' included, is a
// collective's. Calls are not looked into: they count as other effects.
bool OnlyCollectiveEffects(const ir::Operation& op, const ir::Module& module) {
  if (!ops::HasSideEffects(op, &module)) return true;
  for (const char* call : {"callee", "decomposition"}) {
    if (op.attr(call).kind() != ir::Attribute::Kind::kNull) return false;
  }
  bool only = true;
  auto check = [&](const ir::Operation& o) {
    const ops::OpDef* def = ops::OpRegistry::Lookup(o.name());
    if (def == nullptr || (def->side_effects && !IsCollective(o, *def))) only = false;
  };
  check(op);
  for (int r = 0; r < op.num_regions(); ++r) ir::Walk(op.region(r), check);
  return only;
}

class BlockScheduler {
 public:
  explicit BlockScheduler(const ir::Module& module) : module_(module) {}

  void Run(ir::Region& region) {
    for (int b = 0; b < region.num_blocks(); ++b) Schedule(region.block(b));
  }

 private:
  using Ops = std::vector<std::unique_ptr<ir::Operation>>;

  void Schedule(ir::Block& block) {
    Ops ops = block.TakeOps();
    Facts facts;
    for (auto& op : ops) {
      for (int r = 0; r < op->num_regions(); ++r) Run(op->region(r));
      facts.in_block.insert(op.get());
      for (ir::Value v : ValuesRead(*op)) ++facts.readers[v.impl()];
    }
    for (size_t i = 0; i < ops.size(); ++i) {
      if (!Shrinks(*ops[i], facts)) continue;
      const size_t to = Destination(ops, i);
      std::rotate(ops.begin() + to, ops.begin() + i, ops.begin() + i + 1);
    }
    for (auto& op : ops) block.Append(std::move(op));
  }

  struct Facts {
    std::unordered_set<const ir::Operation*> in_block;  // the block's ops
    std::unordered_map<const void*, int> readers;       // per value, the ops reading it
  };

  // Whether `op` is the only reader of a value defined in its block that
  // is larger than its results.
  static bool Shrinks(const ir::Operation& op, const Facts& facts) {
    if (op.num_results() == 0) return false;
    const int64_t out = ResultBytes(op);
    for (ir::Value v : op.operands()) {
      if (facts.in_block.count(v.defining_op()) && ops::LogicalBytes(v.type()) > out &&
          facts.readers.at(v.impl()) == 1) {
        return true;
      }
    }
    return false;
  }

  // Just after the last op that ops[i] must follow.
  size_t Destination(const Ops& ops, size_t i) const {
    std::vector<const ir::Operation*> producers;
    for (ir::Value v : ValuesRead(*ops[i])) producers.push_back(v.defining_op());
    const bool effects = ops::HasSideEffects(*ops[i], &module_);
    size_t to = i;
    for (; to > 0; --to) {
      const ir::Operation* before = ops[to - 1].get();
      if (std::find(producers.begin(), producers.end(), before) != producers.end()) break;
      if (effects && !OnlyCollectiveEffects(*before, module_)) break;
    }
    return to;
  }

  const ir::Module& module_;
};

}  // namespace

Status RunMemoryScheduling(ir::Module& module, PassContext&) {
  BlockScheduler scheduler(module);
  for (const auto& f : module.functions()) {
    scheduler.Run(f->body());
    f->Renumber();
  }
  return Status::Ok();
}

}  // namespace tpusim::compiler

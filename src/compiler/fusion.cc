// Fusion: XLA-style greedy producer -> consumer fusion into tpusim.fusion
// kernels, so that the values between fused ops stay on chip instead of
// making a round trip through HBM.
//
// Contract. In every function and every control-flow region (while, if and
// case bodies; not per-element bodies such as a reduce's), kernels grow from
// a root, roots visited from the end of each block back:
//  - kLoop: elementwise ops (fusion_rules.h), broadcast_in_dim, reshape,
//    transpose, tpusim.copy, iota and scalar or splat constants fuse into an
//    elementwise or data-movement consumer;
//  - kInput: the same producers fuse into a reduce or reduce_window root;
//  - kOutput: a dot_general or convolution fuses into its elementwise
//    consumers (bias, activation, scale epilogues) and relayout copies;
//    producers of the dot's own operands stay outside, but for views it
//    reads in place (a dynamic_slice, a reshape: a layer's weights sliced
//    from a loop's stack), and a kernel holds one dot. A dot no epilogue
//    took roots a kernel of its own when it has such views;
// A producer fuses only if all its users are in the kernel, so its value
// never leaves it. The exceptions are what XLA duplicates into each kernel
// that uses it: constants, iota, broadcasts of a scalar (which stay outside
// as long as they have users there), and, once the kernels are formed, a
// kLoop kernel of cheap ops whose result only kernels read (x - mean in a
// layer norm, read by the variance's reduction and by the normalization):
// it merges into each of them (MergeCheapKernels). A kernel's one output is
// its root's; since the other members' values never leave the kernel, no
// value can leave it and come back, and no cycle forms.
// Not fused: ops with side effects or regions (other than a reduction root),
// collectives, a reduction into its consumers, and kernels of fewer than two
// ops besides constants (nothing to gain). Types keep their layouts: layout
// assignment runs before fusion, and a kernel's block arguments take its
// operands' types.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/fusion_rules.h"
#include "tpusim/base/text.h"
#include "tpusim/compiler/pass.h"
#include "tpusim/ir/rewrite.h"
#include "tpusim/ops/op_def.h"

namespace tpusim::compiler {
namespace {

enum class Kind { kLoop, kInput, kOutput };

const char* KindName(Kind k) {
  switch (k) {
    case Kind::kLoop: return "kLoop";
    case Kind::kInput: return "kInput";
    case Kind::kOutput: return "kOutput";
  }
  return "?";
}

struct Kernel {
  ir::Operation* root = nullptr;
  Kind kind = Kind::kLoop;
  std::vector<ir::Operation*> members;  // root included
  // Members on a dot's operand side, where only views may join.
  std::unordered_set<const ir::Operation*> operand_side;
  bool merged = false;  // into the kernels that read it (MergeCheapKernels)
};

// What fusion did to a module, for the pass's note.
struct Stats {
  int kernels[3] = {0, 0, 0};  // by Kind
  int fused_ops = 0;
};

// Forms the kernels of one block and rewrites the block with them.
class BlockFuser {
 public:
  BlockFuser(ir::Block& block, int* next_name, Stats* stats)
      : block_(block), next_name_(next_name), stats_(stats) {}

  void Run() {
    IndexUsers();
    const auto& ops = block_.ops();
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) TryRoot(it->get());
    MergeCheapKernels();
    if (!kernels_.empty()) Rewrite();
  }

 private:
  // The ops of this block that use each op's results, directly or inside
  // their regions, once each in block order.
  void IndexUsers() {
    for (const auto& op : block_.ops()) {
      ir::Operation* user = op.get();
      auto note = [&](const ir::Operation& o) {
        for (ir::Value v : o.operands()) {
          ir::Operation* def = Producer(v);
          if (def == nullptr) continue;
          std::vector<ir::Operation*>& list = users_[def];
          if (list.empty() || list.back() != user) list.push_back(user);
        }
      };
      note(*user);
      for (int r = 0; r < user->num_regions(); ++r) ir::Walk(user->region(r), note);
    }
  }

  // The op of this block that defines `v`; null for arguments and values
  // from enclosing blocks.
  ir::Operation* Producer(ir::Value v) const {
    ir::Operation* def = v.defining_op();
    return def != nullptr && def->parent() == &block_ ? def : nullptr;
  }

  const std::vector<ir::Operation*>& UsersOf(const ir::Operation* op) {
    return users_[op];
  }

  bool InKernel(const ir::Operation* op, int k) {
    const std::vector<int>& in = kernels_of_[op];
    return std::find(in.begin(), in.end(), k) != in.end();
  }

  void Add(ir::Operation* op, int k) {
    kernels_[k].members.push_back(op);
    kernels_of_[op].push_back(k);
  }

  void TryRoot(ir::Operation* op) {
    if (!kernels_of_[op].empty()) return;  // already fused as a producer
    std::optional<Kind> kind;
    if (IsFusibleReduction(*op)) kind = Kind::kInput;
    else if (IsLoopFusible(*op) && !IsDuplicable(*op)) kind = Kind::kLoop;
    else if (IsMatmul(*op))
      kind = Kind::kOutput;  // a dot no epilogue took: its views
    if (!kind) return;
    const int k = static_cast<int>(kernels_.size());
    kernels_.push_back(Kernel{op, *kind, {}, {}, false});
    Add(op, k);
    Grow(k);
    if (!Worthwhile(kernels_[k])) Drop(k);
  }

  // Pulls producers into kernel k, from its root back, while they qualify.
  void Grow(int k) {
    std::vector<ir::Operation*> pending = {kernels_[k].root};
    while (!pending.empty()) {
      ir::Operation* member = pending.back();
      pending.pop_back();
      const bool views_only =
          IsMatmul(*member) || kernels_[k].operand_side.count(member) > 0;
      for (ir::Value v : member->operands()) {
        ir::Operation* producer = Producer(v);
        if (producer == nullptr || InKernel(producer, k)) continue;
        if (views_only && !IsOperandView(*producer)) continue;
        if (!CanFuse(*producer, k)) continue;
        if (IsMatmul(*producer)) kernels_[k].kind = Kind::kOutput;
        if (views_only) kernels_[k].operand_side.insert(producer);
        Add(producer, k);
        pending.push_back(producer);
      }
    }
  }

  // Whether `producer` may join kernel k now. A user added to k later
  // re-checks it, so a producer whose users all end up in k joins.
  bool CanFuse(const ir::Operation& producer, int k) {
    if (IsDuplicable(producer)) return true;
    if (!kernels_of_[&producer].empty()) return false;  // in another kernel
    const bool matmul = IsMatmul(producer);
    if (matmul ? kernels_[k].kind != Kind::kLoop : !IsLoopFusible(producer)) return false;
    for (const ir::Operation* user : UsersOf(&producer)) {
      // A duplicated user may stay outside too, and would need this value.
      if (!InKernel(user, k) || IsDuplicable(*user)) return false;
      if (IsMatmul(*user) && !IsOperandView(producer)) return false;
      if (matmul && !IsEpilogue(*user)) return false;
    }
    return true;
  }

  // Once every kernel of the block is formed: a kLoop kernel of cheap ops
  // (fusion_rules.h, IsCheapToDuplicate: x - broadcast(mean) in a layer
  // norm, with the mean itself, a per-row value) whose result only kernels
  // read, none as a dot's operand, is merged into each of them, as XLA
  // duplicates cheap producers into all their consumers: its result is
  // never written. The kernel's own inputs are read as before, so no value
  // that was inside a kernel has to leave it. In program order, so that
  // such kernels feeding each other merge in turn.
  void MergeCheapKernels() {
    std::vector<int> order(kernels_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::unordered_map<const ir::Operation*, size_t> position;
    for (size_t i = 0; i < block_.ops().size(); ++i) position[block_.ops()[i].get()] = i;
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      return position.at(kernels_[a].root) < position.at(kernels_[b].root);
    });
    for (int k : order) {
      Kernel& kernel = kernels_[k];
      if (kernel.kind != Kind::kLoop) continue;
      bool cheap = true;
      for (const ir::Operation* m : kernel.members) {
        cheap = cheap && (IsDuplicable(*m) || IsCheapToDuplicate(*m) || IsPerRowValue(*m));
      }
      if (!cheap || UsersOf(kernel.root).empty()) continue;
      std::vector<int> into;
      for (const ir::Operation* user : UsersOf(kernel.root)) {
        const std::vector<int>& in = kernels_of_[user];
        bool ok = !in.empty() && !IsMatmul(*user);
        for (int j : in) {
          ok = ok && j != k && kernels_[j].operand_side.count(user) == 0;
          if (ok && std::find(into.begin(), into.end(), j) == into.end()) into.push_back(j);
        }
        if (!ok) {
          into.clear();
          break;
        }
      }
      if (into.empty()) continue;
      const std::vector<ir::Operation*> members = kernel.members;
      for (ir::Operation* m : members) {
        std::vector<int>& in = kernels_of_[m];
        in.erase(std::find(in.begin(), in.end(), k));
        for (int j : into) {
          if (!InKernel(m, j)) Add(m, j);
        }
      }
      kernel.members.clear();
      kernel.merged = true;
    }
  }

  // An elementwise op whose every user broadcasts its value to at least 8
  // times as many elements (a row's mean or 1/sqrt(variance)): computing it
  // again in each kernel costs a fraction of the kernel's work, whatever
  // the op.
  bool IsPerRowValue(const ir::Operation& op) {
    if (!IsElementwise(op) || UsersOf(&op).empty()) return false;
    const int64_t n = op.result(0).type().num_elements();
    for (const ir::Operation* user : UsersOf(&op)) {
      if (user->name_str() != "stablehlo.broadcast_in_dim" ||
          user->result(0).type().num_elements() < 8 * n) {
        return false;
      }
    }
    return true;
  }

  static bool Worthwhile(const Kernel& k) {
    return std::count_if(k.members.begin(), k.members.end(), [](const ir::Operation* op) {
             return op->name_str() != "stablehlo.constant";
           }) >= 2;
  }

  // Forgets the last kernel formed.
  void Drop(int k) {
    for (ir::Operation* op : kernels_[k].members) {
      std::vector<int>& in = kernels_of_[op];
      in.erase(std::find(in.begin(), in.end(), k));
    }
    kernels_.pop_back();
  }

  bool IsRoot(const ir::Operation* op) const { return roots_.count(op) > 0; }

  // Whether every use of `op` is inside kernels that hold a copy of it,
  // every kernel its users are in, so that the op itself can go. Memoized:
  // kernels share users.
  bool Absorbed(const ir::Operation* op) {
    auto [it, inserted] = absorbed_.emplace(op, true);
    if (!inserted) return it->second;
    bool absorbed = true;
    for (const ir::Operation* user : UsersOf(op)) {
      const std::vector<int>& in = kernels_of_[user];
      bool shared = !in.empty();
      for (int k : in) shared = shared && InKernel(op, k);
      absorbed = absorbed && shared && (IsRoot(user) || Absorbed(user));
    }
    return absorbed_[op] = absorbed;
  }

  void Rewrite() {
    for (size_t i = 0; i < block_.ops().size(); ++i) position_[block_.ops()[i].get()] = i;
    // Kernels were found from the end back; name them in program order.
    std::vector<Kernel*> in_order;
    for (Kernel& k : kernels_) {
      if (!k.merged) in_order.push_back(&k);
    }
    std::sort(in_order.begin(), in_order.end(), [&](const Kernel* a, const Kernel* b) {
      return position_.at(a->root) < position_.at(b->root);
    });
    std::unordered_map<const ir::Operation*, std::unique_ptr<ir::Operation>> fusions;
    ir::ValueMap outside;  // root results -> fusion results
    for (Kernel* k : in_order) {
      roots_.insert(k->root);
      fusions[k->root] = BuildFusion(*k, outside);
    }
    std::vector<std::unique_ptr<ir::Operation>> old = block_.TakeOps();
    for (std::unique_ptr<ir::Operation>& op : old) {
      auto fusion = fusions.find(op.get());
      if (fusion != fusions.end()) {
        block_.Append(std::move(fusion->second));
      } else if (kernels_of_[op.get()].empty() || !Absorbed(op.get())) {
        block_.Append(std::move(op));
      }
    }
    ir::ReplaceUses(*block_.parent(), outside);
  }

  // The tpusim.fusion op computing kernel k; maps the root's results to its
  // results in `outside`.
  std::unique_ptr<ir::Operation> BuildFusion(Kernel& k, ir::ValueMap& outside) {
    std::sort(k.members.begin(), k.members.end(),
              [&](const ir::Operation* a, const ir::Operation* b) {
                return position_.at(a) < position_.at(b);
              });
    std::unordered_set<const ir::Operation*> inside(k.members.begin(), k.members.end());
    std::vector<ir::Value> inputs;
    std::unordered_set<const ir::ValueImpl*> seen;
    for (const ir::Operation* m : k.members) {
      for (ir::Value v : m->operands()) {
        if (inside.count(v.defining_op()) == 0 && seen.insert(v.impl()).second) {
          inputs.push_back(v);
        }
      }
    }
    auto fusion = std::make_unique<ir::Operation>(ir::OpName("tpusim.fusion"), k.root->loc());
    fusion->SetOperands(inputs);
    fusion->attrs().Set("kind", ir::Attribute::String(KindName(k.kind)));
    fusion->attrs().Set("name",
                        ir::Attribute::String("fusion." + std::to_string((*next_name_)++)));
    ir::Block& body = fusion->AddRegion().AddBlock();
    ir::ValueMap map;
    for (ir::Value v : inputs) map[v.impl()] = body.AddArgument(v.type());
    for (const ir::Operation* m : k.members) body.Append(ir::CloneOp(*m, map));
    auto ret = std::make_unique<ir::Operation>(ir::OpName("stablehlo.return"), k.root->loc());
    std::vector<ir::Value> results;
    for (ir::Value r : k.root->results()) {
      results.push_back(map.at(r.impl()));
      outside[r.impl()] = fusion->AddResult(r.type(), r.name());
    }
    ret->SetOperands(std::move(results));
    body.Append(std::move(ret));
    ++stats_->kernels[static_cast<int>(k.kind)];
    stats_->fused_ops += static_cast<int>(k.members.size());
    return fusion;
  }

  ir::Block& block_;
  int* next_name_;
  Stats* stats_;
  std::unordered_map<const ir::Operation*, std::vector<ir::Operation*>> users_;
  std::unordered_map<const ir::Operation*, std::vector<int>> kernels_of_;
  std::unordered_map<const ir::Operation*, size_t> position_;
  std::unordered_set<const ir::Operation*> roots_;
  std::unordered_map<const ir::Operation*, bool> absorbed_;
  std::vector<Kernel> kernels_;
};

// Fuses `block` after the blocks of its control-flow ops' regions.
void FuseBlock(ir::Block& block, int* next_name, Stats* stats) {
  for (const auto& op : block.ops()) {
    const ops::OpDef* def = ops::OpRegistry::Lookup(op->name());
    if (def == nullptr || !def->control_flow) continue;
    for (int r = 0; r < op->num_regions(); ++r) {
      for (int b = 0; b < op->region(r).num_blocks(); ++b) {
        FuseBlock(op->region(r).block(b), next_name, stats);
      }
    }
  }
  BlockFuser(block, next_name, stats).Run();
}

}  // namespace

Status RunFusion(ir::Module& module, PassContext& ctx) {
  int next_name = 0;
  Stats stats;
  for (const auto& f : module.functions()) {
    for (int b = 0; b < f->body().num_blocks(); ++b) {
      FuseBlock(f->body().block(b), &next_name, &stats);
    }
    f->Renumber();
  }
  if (next_name > 0) {
    ctx.notes.push_back("fusion: " + std::to_string(stats.fused_ops) + " ops into " +
                        CountOf(next_name, "kernel") + " (" +
                        std::to_string(stats.kernels[0]) + " kLoop, " +
                        std::to_string(stats.kernels[1]) + " kInput, " +
                        std::to_string(stats.kernels[2]) + " kOutput)");
  }
  return Status::Ok();
}

}  // namespace tpusim::compiler

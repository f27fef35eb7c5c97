// Layout assignment: chooses each array's physical layout so its minor two
// dimensions fill the TPU's (8|16|32, 128) tiles, as XLA does before fusion.
//
// The entry function's parameters and results keep their given layouts (the
// program's interface); other functions, nested block arguments and the
// results of ops without a layout choice are row-major (layout_rules.h says
// what each op accepts and produces). The values the pass chooses are those
// of layout-flexible ops (elementwise, broadcast_in_dim, iota, constant,
// reduce, transpose). Elementwise ops tie their operands and result together,
// so values are chosen in groups: the elementwise-connected values of one
// shape. Each group, in program order, takes the cheapest of: row-major; the
// layout whose minor two dimensions pad least ("best tile": f32[4096,3] pads
// 3 -> 128 lanes row-major, 42x, but 3 -> 8 sublanes as {0,1}, 2.7x); and,
// for a transpose in the group, its operand's layout permuted, which makes
// the transpose a bitcast. Cost is HBM bytes, padding included: each member
// written once (a constant or a bitcast transpose: never) and read by each
// use, plus a copy (read + write) for each use, inside or outside the group,
// whose rule the layout does not meet. Ties keep row-major. Then every operand
// whose layout its user does not accept gets a tpusim.copy to the layout it
// needs, one per (value, layout), right after the value's definition: real
// ops that the timing model prices. VerifyLayouts checks the result.
#include <algorithm>
#include <cstdio>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <utility>

#include "compiler/layout_rules.h"
#include "tpusim/base/bytes.h"
#include "tpusim/base/text.h"
#include "tpusim/compiler/pass.h"
#include "tpusim/hw/layout.h"
#include "tpusim/ir/rewrite.h"

namespace tpusim::compiler {
namespace {

using Layout = std::vector<int64_t>;

struct Use {
  ir::Operation* op;
  int index;
};

struct Stats {
  int laid_out = 0;             // values given a layout other than row-major
  int64_t row_major_bytes = 0;  // their padded bytes had they stayed row-major
  int64_t chosen_bytes = 0;     // and as laid out
  int copies = 0;
  int64_t copy_bytes = 0;  // read + written by the copies
};

bool IsFlexible(LayoutRule r) {
  return r == LayoutRule::kElementwise || r == LayoutRule::kProducer || r == LayoutRule::kTranspose;
}

int64_t Padded(const ir::Type& t) { return hw::PaddedBytes(t); }

// Union-find over value ids; the root of a group is its smallest id.
class Groups {
 public:
  explicit Groups(int n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  int Find(int x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void Union(int a, int b) {
    a = Find(a);
    b = Find(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);
  }

 private:
  std::vector<int> parent_;
};

// Assigns the layouts of one function.
class FunctionAssigner {
 public:
  FunctionAssigner(ir::Function& f, bool is_entry) : f_(f), is_entry_(is_entry) {}

  void Run(Stats& stats) {
    ResetLayouts();
    Index();
    Choose(stats);
    InsertCopies(stats);
    f_.Renumber();
  }

 private:
  // Forgets the layouts of everything but the entry's interface: results of
  // flexible ops start row-major and are chosen below.
  void ResetLayouts() {
    if (!is_entry_) {
      for (ir::Value arg : f_.entry().arguments()) arg.set_type(RowMajor(arg.type()));
      ir::FunctionType t = f_.type();
      for (ir::Type& in : t.inputs) in = RowMajor(in);
      for (ir::Type& out : t.results) out = RowMajor(out);
      f_.set_type(std::move(t));
    }
    ir::Walk(f_.body(), [](ir::Operation& op) {
      for (int i = 0; i < op.num_results(); ++i) {
        op.result(i).set_type(ResetType(op, i));
      }
      for (int r = 0; r < op.num_regions(); ++r) {
        for (int b = 0; b < op.region(r).num_blocks(); ++b) {
          for (ir::Value arg : op.region(r).block(b).arguments()) {
            arg.set_type(RowMajor(arg.type()));
          }
        }
      }
    });
  }

  // A get_tuple_element result is its element as the tuple holds it; every
  // other result starts row-major.
  static ir::Type ResetType(const ir::Operation& op, int i) {
    const ir::Type& t = op.result(i).type();
    if (RuleOf(op) != LayoutRule::kTupleElement) return RowMajor(t);
    const ir::Type& tuple = op.operand(0).type();
    const int64_t index = op.attr("index") ? op.attr("index").int_value() : -1;
    if (!tuple.is_tuple() || index < 0 ||
        index >= static_cast<int64_t>(tuple.tuple_elements().size())) {
      return RowMajor(t);
    }
    return tuple.tuple_elements()[index];
  }

  // Numbers the values and records their uses and groups.
  void Index() {
    f_.Renumber();
    const int n = f_.num_values();
    values_.assign(n, ir::Value());
    uses_.assign(n, {});
    flexible_.assign(n, false);
    groups_ = Groups(n);
    for (ir::Value arg : f_.entry().arguments()) values_[arg.id()] = arg;
    ir::Walk(f_.body(), [&](ir::Operation& op) {
      const bool flexible = IsFlexible(RuleOf(op));
      for (int i = 0; i < op.num_results(); ++i) {
        ir::Value r = op.result(i);
        values_[r.id()] = r;
        flexible_[r.id()] = flexible && r.type().is_tensor() && r.type().rank() >= 2;
      }
      for (int i = 0; i < op.num_operands(); ++i) uses_[op.operand(i).id()].push_back({&op, i});
      for (int r = 0; r < op.num_regions(); ++r) {
        for (int b = 0; b < op.region(r).num_blocks(); ++b) {
          for (ir::Value arg : op.region(r).block(b).arguments()) values_[arg.id()] = arg;
        }
      }
      if (RuleOf(op) != LayoutRule::kElementwise || !flexible_[op.result(0).id()]) return;
      for (ir::Value v : op.operands()) {
        if (flexible_[v.id()]) groups_.Union(v.id(), op.result(0).id());
      }
    });
  }

  // Lays out each group, in program order, as the cheapest candidate.
  void Choose(Stats& stats) {
    std::map<int, std::vector<ir::Value>> members;  // by root: program order
    for (int id = 0; id < static_cast<int>(values_.size()); ++id) {
      if (flexible_[id]) members[groups_.Find(id)].push_back(values_[id]);
    }
    decided_.assign(values_.size(), false);
    for (auto& [root, group] : members) {
      Layout best;
      int64_t best_cost = Cost(group, root, best);
      for (const Layout& l : Candidates(group)) {
        const int64_t c = Cost(group, root, l);
        if (c < best_cost) {
          best_cost = c;
          best = l;
        }
      }
      for (ir::Value v : group) {
        const ir::Type laid_out = WithLayoutOrRowMajor(v.type(), best);
        if (!laid_out.layout().empty()) {
          ++stats.laid_out;
          stats.row_major_bytes += Padded(v.type());
          stats.chosen_bytes += Padded(laid_out);
        }
        v.set_type(laid_out);
      }
      decided_[root] = true;
    }
  }

  // The layouts worth pricing besides row-major: the best tile fit, and each
  // transpose member's bitcast of an operand whose layout is known.
  std::vector<Layout> Candidates(const std::vector<ir::Value>& group) {
    std::vector<Layout> out;
    auto add = [&](Layout l) {
      if (!l.empty() && std::find(out.begin(), out.end(), l) == out.end()) out.push_back(l);
    };
    add(BestTile(group));
    for (ir::Value v : group) {
      const ir::Operation& op = *v.defining_op();
      if (RuleOf(op) != LayoutRule::kTranspose) continue;
      ir::Value operand = op.operand(0);
      if (flexible_[operand.id()] && !decided_[groups_.Find(operand.id())]) continue;
      add(v.type().WithLayout(ir::TransposedLayout(operand.type(), Permutation(op))).layout());
    }
    return out;
  }

  // The layout whose minor two dimensions pad the group's values least;
  // empty (row-major) unless another is strictly better.
  static Layout BestTile(const std::vector<ir::Value>& group) {
    const int64_t rank = group.front().type().rank();
    auto padded = [&](const Layout& l) {
      int64_t sum = 0;
      for (ir::Value v : group) sum += Padded(v.type().WithLayout(l));
      return sum;
    };
    Layout best = group.front().type().WithDefaultLayout().MinorToMajor();
    int64_t best_bytes = padded(best);
    for (int64_t minor = rank - 1; minor >= 0; --minor) {
      for (int64_t second = rank - 1; second >= 0; --second) {
        if (second == minor) continue;
        Layout l = {minor, second};
        for (int64_t d = rank - 1; d >= 0; --d) {
          if (d != minor && d != second) l.push_back(d);
        }
        const int64_t bytes = padded(l);
        if (bytes < best_bytes) {
          best_bytes = bytes;
          best = l;
        }
      }
    }
    return group.front().type().WithLayout(best).layout();
  }

  static Layout Permutation(const ir::Operation& transpose) {
    ir::Attribute perm = transpose.attr("permutation");
    return perm ? perm.AsInts() : Layout{};
  }

  // HBM bytes the group moves if laid out as `l` (empty: row-major): see
  // the file comment.
  int64_t Cost(const std::vector<ir::Value>& group, int root, const Layout& l) {
    int64_t cost = 0;
    std::set<std::pair<const ir::ValueImpl*, Layout>> copies;
    auto read = [&](ir::Value v, const ir::Type& as, const LayoutNeed& need) {
      if (Satisfies(as, need)) {
        cost += Padded(as);
        return;
      }
      const ir::Type to = as.WithLayout(LayoutFor(as, need));
      if (copies.insert({v.impl(), to.layout()}).second) cost += Padded(as) + Padded(to);
      cost += Padded(to);
    };
    const LayoutNeed group_need{.kind = LayoutNeed::Kind::kExact, .layout = l};
    for (ir::Value v : group) {
      const ir::Type t = WithLayoutOrRowMajor(v.type(), l);
      cost += ProduceCost(v, t, root, l);
      for (const Use& u : uses_[v.id()]) {
        const bool in_group = RuleOf(*u.op) == LayoutRule::kElementwise;
        read(v, t, in_group ? group_need : NeedOf(*u.op, u.index, f_.type()));
      }
      const ir::Operation& op = *v.defining_op();
      if (RuleOf(op) != LayoutRule::kElementwise) continue;
      for (ir::Value operand : op.operands()) {
        if (!flexible_[operand.id()]) read(operand, operand.type(), group_need);
      }
    }
    return cost;
  }

  static ir::Type WithLayoutOrRowMajor(const ir::Type& t, const Layout& l) {
    return t.WithLayout(l.empty() ? t.WithDefaultLayout().MinorToMajor() : l);
  }

  // Bytes to produce member `v` as `t`: constants are part of the program
  // and a transpose that is a bitcast moves nothing.
  int64_t ProduceCost(ir::Value v, const ir::Type& t, int root, const Layout& l) {
    const ir::Operation& op = *v.defining_op();
    if (op.name_str() == "stablehlo.constant") return 0;
    if (RuleOf(op) != LayoutRule::kTranspose) return Padded(t);
    ir::Value operand = op.operand(0);
    const bool same_group = flexible_[operand.id()] && groups_.Find(operand.id()) == root;
    const ir::Type in = same_group ? WithLayoutOrRowMajor(operand.type(), l) : operand.type();
    if (ir::TransposedLayout(in, Permutation(op)) == t.MinorToMajor()) return 0;
    return Padded(in) + Padded(t);
  }

  // Gives every operand the layout its user needs.
  void InsertCopies(Stats& stats) {
    struct Fix {
      ir::Operation* op;
      int index;
      Layout layout;
    };
    std::vector<Fix> fixes;
    ir::Walk(f_.body(), [&](ir::Operation& op) {
      for (int i = 0; i < op.num_operands(); ++i) {
        const ir::Type& t = op.operand(i).type();
        const LayoutNeed need = NeedOf(op, i, f_.type());
        if (!Satisfies(t, need)) fixes.push_back({&op, i, LayoutFor(t, need)});
      }
    });
    std::map<std::pair<const ir::ValueImpl*, Layout>, ir::Value> copies;
    for (const Fix& fix : fixes) {
      ir::Value v = fix.op->operand(fix.index);
      ir::Value& copy = copies[{v.impl(), fix.layout}];
      if (!copy) {
        copy = InsertCopy(v, fix.layout, fix.op->loc());
        ++stats.copies;
        stats.copy_bytes += Padded(v.type()) + Padded(copy.type());
      }
      fix.op->SetOperand(fix.index, copy);
    }
  }

  // A tpusim.copy of `v` into `layout`, right after v's definition, so that
  // it dominates every use; `loc` is that of the first user needing it.
  static ir::Value InsertCopy(ir::Value v, const Layout& layout, const ir::Location& loc) {
    auto op = std::make_unique<ir::Operation>(ir::OpName("tpusim.copy"), loc);
    op->SetOperands({v});
    op->AddResult(WithLayoutOrRowMajor(v.type(), layout),
                  v.name().empty() ? "" : v.name() + ".copy");
    ir::Block* block = v.is_block_argument() ? v.impl()->block : v.defining_op()->parent();
    ir::Operation* pos = block->ops().empty() ? nullptr : block->ops().front().get();
    if (!v.is_block_argument()) {
      const auto& ops = block->ops();
      auto it = std::find_if(ops.begin(), ops.end(),
                             [&](const auto& o) { return o.get() == v.defining_op(); });
      pos = std::next(it) == ops.end() ? nullptr : std::next(it)->get();
    }
    return block->InsertBefore(pos, std::move(op))->result(0);
  }

  ir::Function& f_;
  const bool is_entry_;
  std::vector<ir::Value> values_;  // by id
  std::vector<std::vector<Use>> uses_;
  std::vector<bool> flexible_;  // the pass chooses its layout
  std::vector<bool> decided_;   // by group root
  Groups groups_{0};
};

}  // namespace

Status RunLayoutAssignment(ir::Module& module, PassContext& ctx) {
  Stats stats;
  for (const auto& f : module.functions()) {
    FunctionAssigner(*f, f->name() == ctx.entry).Run(stats);
  }
  TPUSIM_RETURN_IF_ERROR(VerifyLayouts(module, ctx.entry));
  // Sizes in binary units of three digits, so that a small change shows.
  ctx.notes.push_back("layout-assignment: " + CountOf(stats.laid_out, "value") +
                      " laid out other than row-major (padded " +
                      FormatBinaryBytes(stats.row_major_bytes) + " -> " +
                      FormatBinaryBytes(stats.chosen_bytes) + "), " +
                      std::to_string(stats.copies) + (stats.copies == 1 ? " copy" : " copies") +
                      " inserted (" + FormatBinaryBytes(stats.copy_bytes) + " moved)");
  return Status::Ok();
}

}  // namespace tpusim::compiler

// The collective ops: all_gather, all_reduce, all_to_all, reduce_scatter,
// collective_permute, collective_broadcast and collective_reduce, with the
// process-group strategies of the spec's "Collective ops" section. The data
// exchange itself is ops::Collectives; alone (no grid) a process can only
// meet itself.
#include <algorithm>
#include <cstring>
#include <set>

#include "ops/kernels/region_kernels.h"
#include "ops/util/op_util.h"
#include "ops/util/work_util.h"
#include "tpusim/base/text.h"
#include "tpusim/ops/collectives.h"

namespace tpusim::ops {
namespace {

using Groups = std::vector<std::vector<ProcessId>>;

// ---------------------------------------------------------------------------
// Process groups.

enum class Strategy { kCrossReplica, kCrossPartition, kCrossReplicaAndPartition, kFlattenedIds };

struct Grid {
  int64_t replicas, partitions, replica, partition;
  ProcessId self() const { return replica * partitions + partition; }
  std::string Name(ProcessId p) const {
    return "(" + std::to_string(p / partitions) + ", " + std::to_string(p % partitions) + ")";
  }
};

Grid GridOf(EvalContext& ctx) {
  return {ctx.num_replicas(), ctx.num_partitions(), ctx.replica_id(), ctx.partition_id()};
}

int64_t ChannelId(const ir::Operation& op) {
  ir::Attribute h = op.attr("channel_handle");
  if (h.kind() != ir::Attribute::Kind::kStruct) return 0;
  ir::Attribute id = h.Get("handle");
  return id.kind() == ir::Attribute::Kind::kInt ? id.int_value() : 0;
}

bool UseGlobalDeviceIds(const ir::Operation& op) {
  ir::Attribute a = op.attr("use_global_device_ids");
  return a.kind() == ir::Attribute::Kind::kUnit ||
         (a.kind() == ir::Attribute::Kind::kBool && a.bool_value());
}

// The rows of a 2-D integer attribute (replica_groups, source_target_pairs);
// negative entries pad uneven rows and are dropped.
StatusOr<Groups> ReadRows(const ir::Operation& op, std::string_view key) {
  ir::Attribute a = op.attr(key);
  if (!a) return Groups{};
  if (a.kind() == ir::Attribute::Kind::kStruct) {
    return Unimplemented("'" + op.name_str() + "' " + std::string(key) + " given as #" + a.name() +
                         " is not supported; use a dense tensor of ids");
  }
  std::vector<int64_t> flat = a.AsInts();
  int64_t cols = 0;
  if (a.kind() == ir::Attribute::Kind::kDenseElements && a.type().rank() == 2) {
    cols = a.type().dim(1);
  } else if (a.kind() == ir::Attribute::Kind::kDenseElements && flat.empty()) {
    return Groups{};
  } else {
    return InvalidArgument("'" + op.name_str() + "' attribute '" + std::string(key) +
                           "' must be a 2-D integer tensor");
  }
  Groups rows;
  for (size_t i = 0; cols > 0 && i < flat.size(); i += cols) {
    std::vector<ProcessId> row;
    for (int64_t j = 0; j < cols; ++j) {
      if (flat[i + j] >= 0) row.push_back(flat[i + j]);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

// Turns replica_groups into process groups per the spec's four strategies.
// Empty replica_groups mean one group of every id. `unique`: no id may
// appear twice (replica groups; not source_target_pairs, whose ids repeat).
StatusOr<Groups> ProcessGroups(const Groups& ids, Strategy s, const Grid& g, bool unique) {
  int64_t bound = s == Strategy::kCrossPartition ? g.partitions
                  : s == Strategy::kFlattenedIds ? g.replicas * g.partitions
                                                 : g.replicas;
  Groups in = ids;
  if (in.empty()) {
    in.emplace_back();
    for (int64_t i = 0; i < bound; ++i) in.back().push_back(i);
  }
  std::set<int64_t> seen;
  for (const auto& row : in) {
    for (int64_t id : row) {
      if (id >= bound) {
        return OutOfRange("group id " + std::to_string(id) + " is out of range for " +
                          CountOf(g.replicas, "replica") + " x " +
                          CountOf(g.partitions, "partition"));
      }
      if (unique && !seen.insert(id).second) {
        return InvalidArgument("group id " + std::to_string(id) + " appears twice");
      }
    }
  }
  Groups out;
  for (const auto& row : in) {
    switch (s) {
      case Strategy::kCrossReplica:
        for (int64_t p = 0; p < g.partitions; ++p) {
          out.emplace_back();
          for (int64_t r : row) out.back().push_back(r * g.partitions + p);
        }
        break;
      case Strategy::kCrossPartition:
        for (int64_t r = 0; r < g.replicas; ++r) {
          out.emplace_back();
          for (int64_t p : row) out.back().push_back(r * g.partitions + p);
        }
        break;
      case Strategy::kCrossReplicaAndPartition:
        out.emplace_back();
        for (int64_t p = 0; p < g.partitions; ++p) {
          for (int64_t r : row) out.back().push_back(r * g.partitions + p);
        }
        break;
      case Strategy::kFlattenedIds:
        out.push_back(row);
        break;
    }
  }
  return out;
}

// The strategy of all_gather, all_reduce and reduce_scatter.
Strategy ReplicaStrategy(const ir::Operation& op) {
  if (ChannelId(op) <= 0) return Strategy::kCrossReplica;
  return UseGlobalDeviceIds(op) ? Strategy::kFlattenedIds : Strategy::kCrossReplicaAndPartition;
}

// The strategy of all_to_all, collective_broadcast/permute/reduce.
Strategy ChannelStrategy(const ir::Operation& op) {
  return ChannelId(op) > 0 ? Strategy::kCrossPartition : Strategy::kCrossReplica;
}

// This process's group, or an empty one if it is in none.
StatusOr<std::vector<ProcessId>> MyGroup(const ir::Operation& op, Strategy s, const Grid& g) {
  TPUSIM_ASSIGN_OR_RETURN(Groups rows, ReadRows(op, "replica_groups"));
  TPUSIM_ASSIGN_OR_RETURN(Groups groups, ProcessGroups(rows, s, g, /*unique=*/true));
  for (auto& group : groups) {
    if (std::find(group.begin(), group.end(), g.self()) != group.end()) return group;
  }
  return std::vector<ProcessId>{};
}

StatusOr<std::vector<ProcessId>> RequireGroup(const ir::Operation& op, Strategy s, const Grid& g) {
  TPUSIM_ASSIGN_OR_RETURN(std::vector<ProcessId> group, MyGroup(op, s, g));
  if (group.empty()) {
    return InvalidArgument("process " + g.Name(g.self()) + " is in no process group");
  }
  return group;
}

int64_t IndexIn(const std::vector<ProcessId>& group, ProcessId p) {
  return std::find(group.begin(), group.end(), p) - group.begin();
}

// Every member's `values`, in group order.
StatusOr<std::vector<std::vector<Tensor>>> Exchange(EvalContext& ctx, const ir::Operation& op,
                                                    const std::vector<ProcessId>& group,
                                                    std::vector<Tensor> values) {
  Grid g = GridOf(ctx);
  if (ctx.collectives() == nullptr) {
    if (group.size() == 1 && group[0] == g.self()) {
      return std::vector<std::vector<Tensor>>{std::move(values)};
    }
    return InvalidArgument("needs a group of " + std::to_string(group.size()) +
                           " processes, but the program runs as one process");
  }
  std::string key = op.name_str() + " (channel " + std::to_string(ChannelId(op)) + ")";
  std::vector<ir::Type> mine;
  for (const Tensor& v : values) mine.push_back(v.type());
  TPUSIM_ASSIGN_OR_RETURN(auto all,
                          ctx.collectives()->Exchange(group, g.self(), key, std::move(values)));
  // Every member must bring what this one does (MPMD programs may not).
  for (size_t m = 0; m < all.size(); ++m) {
    std::vector<ir::Type> theirs;
    for (const Tensor& v : all[m]) theirs.push_back(v.type());
    if (theirs != mine) {
      return InvalidArgument("process " + std::to_string(group[m]) + " brings " +
                             ir::TypeListString(theirs) + " to this collective, process " +
                             std::to_string(g.self()) + " " + ir::TypeListString(mine));
    }
  }
  return all;
}

// ---------------------------------------------------------------------------
// Moving data: concatenation, splitting and elementwise reduction.

// outer = product of dims before `dim`; inner = elements from `dim` on.
void OuterInner(const ir::Shape& shape, int64_t dim, int64_t* outer, int64_t* inner) {
  *outer = 1;
  for (int64_t i = 0; i < dim; ++i) *outer *= shape[i];
  *inner = 1;
  for (size_t i = dim; i < shape.size(); ++i) *inner *= shape[i];
}

StatusOr<Tensor> Concat(const std::vector<Tensor>& parts, int64_t dim) {
  ir::Shape shape = parts[0].shape();
  shape[dim] = 0;
  for (const Tensor& t : parts) shape[dim] += t.shape()[dim];
  TPUSIM_ASSIGN_OR_RETURN(Tensor out,
                          Tensor::Allocate(ir::Type::Tensor(parts[0].element(), shape)));
  int64_t w = ir::StorageBytes(out.element());
  int64_t outer, out_inner;
  OuterInner(shape, dim, &outer, &out_inner);
  uint8_t* dst = out.mutable_raw();
  for (int64_t o = 0; o < outer; ++o) {
    for (const Tensor& t : parts) {
      int64_t unused, inner;
      OuterInner(t.shape(), dim, &unused, &inner);
      if (inner > 0) std::memcpy(dst, t.raw() + o * inner * w, inner * w);
      dst += inner * w;
    }
  }
  return out;
}

// `t` cut into `n` equal parts along `dim`. REQUIRES: n divides the dim.
StatusOr<std::vector<Tensor>> Split(const Tensor& t, int64_t n, int64_t dim) {
  ir::Shape shape = t.shape();
  shape[dim] /= n;
  int64_t w = ir::StorageBytes(t.element());
  int64_t outer, inner, unused, full;
  OuterInner(shape, dim, &outer, &inner);
  OuterInner(t.shape(), dim, &unused, &full);
  std::vector<Tensor> parts;
  for (int64_t k = 0; k < n; ++k) {
    TPUSIM_ASSIGN_OR_RETURN(Tensor part, Tensor::Allocate(ir::Type::Tensor(t.element(), shape)));
    for (int64_t o = 0; o < outer && inner > 0; ++o) {
      std::memcpy(part.mutable_raw() + o * inner * w, t.raw() + (o * full + k * inner) * w,
                  inner * w);
    }
    parts.push_back(std::move(part));
  }
  return parts;
}

// Folds `values` (same type) elementwise, in order, with the binary scalar
// computation `region`.
StatusOr<Tensor> ReduceAcross(EvalContext& ctx, const ir::Region& region,
                              const std::vector<Tensor>& values) {
  const ir::Block& body = region.front();
  ir::Type scalar = ir::Type::Tensor(values[0].element(), {});
  if (body.num_arguments() != 2 || body.argument(0).type() != scalar ||
      body.argument(1).type() != scalar) {
    return Unimplemented("a reduction computation over " + scalar.ToString() + " must take two " +
                         scalar.ToString() + " (element type promotion is not supported)");
  }
  TPUSIM_ASSIGN_OR_RETURN(Tensor acc, values[0].Clone());
  // The common bodies (add, max, ...) with the elementwise ops' own kernels.
  std::optional<BinaryKind> kind = MatchBinaryRegion(region);
  if (kind && WithBinaryKernel(acc.element(), *kind, [&](auto f) {
        using S = typename decltype(f)::Storage;
        S* a = acc.mutable_data<S>();
        for (size_t v = 1; v < values.size(); ++v) {
          const S* b = values[v].data<S>();
          for (int64_t i = 0, n = acc.num_elements(); i < n; ++i) a[i] = f(a[i], b[i]);
        }
      })) {
    return acc;
  }
  int64_t w = ir::StorageBytes(acc.element());
  for (size_t v = 1; v < values.size(); ++v) {
    for (int64_t i = 0, n = acc.num_elements(); i < n; ++i) {
      TPUSIM_ASSIGN_OR_RETURN(Tensor a, Tensor::Allocate(scalar));
      TPUSIM_ASSIGN_OR_RETURN(Tensor b, Tensor::Allocate(scalar));
      std::memcpy(a.mutable_raw(), acc.raw() + i * w, w);
      std::memcpy(b.mutable_raw(), values[v].raw() + i * w, w);
      Tensor args[] = {a, b};
      TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> r, ctx.RunRegion(region, args));
      if (r.size() != 1 || r[0].type() != scalar) {
        return InvalidArgument("the reduction computation must return one " + scalar.ToString());
      }
      std::memcpy(acc.mutable_raw() + i * w, r[0].raw(), w);
    }
  }
  return acc;
}

// Reduces each operand across `group` (results in operand order).
StatusOr<std::vector<Tensor>> AllReduce(EvalContext& ctx, const ir::Operation& op,
                                        const std::vector<ProcessId>& group,
                                        std::span<const Tensor> operands) {
  std::vector<Tensor> mine(operands.begin(), operands.end());
  TPUSIM_ASSIGN_OR_RETURN(auto all, Exchange(ctx, op, group, std::move(mine)));
  std::vector<Tensor> results;
  for (size_t k = 0; k < operands.size(); ++k) {
    std::vector<Tensor> column;
    for (const auto& member : all) column.push_back(member[k]);
    TPUSIM_ASSIGN_OR_RETURN(Tensor r, ReduceAcross(ctx, op.region(0), column));
    results.push_back(std::move(r));
  }
  return results;
}

// ---------------------------------------------------------------------------
// Shape rules.

Status VerifySameTypes(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, op.num_operands()));
  for (int i = 0; i < op.num_results(); ++i) {
    TPUSIM_RETURN_IF_ERROR(ExpectResultType(op, i, op.operand(i).type()));
  }
  return ReadRows(op, "replica_groups").status();
}

Status VerifyReducing(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumRegions(op, 1));
  if (op.region(0).empty() || op.region(0).front().num_arguments() != 2) {
    return InvalidArgument("'" + op.name_str() + "' computation must take two arguments");
  }
  return Status::Ok();
}

StatusOr<int64_t> DimAttr(const ir::Operation& op, std::string_view key, int64_t rank) {
  TPUSIM_ASSIGN_OR_RETURN(ir::Attribute a, GetAttr(op, key, ir::Attribute::Kind::kInt));
  if (a.int_value() < 0 || a.int_value() >= rank) {
    return InvalidArgument("'" + op.name_str() + "' " + std::string(key) + " " +
                           std::to_string(a.int_value()) + " is out of range for rank " +
                           std::to_string(rank));
  }
  return a.int_value();
}

// Result i equals operand i except that dimension `dim` may be scaled.
Status VerifyScaledDim(const ir::Operation& op, int64_t dim) {
  for (int i = 0; i < op.num_results(); ++i) {
    const ir::Type& in = op.operand(i).type();
    const ir::Type& out = op.result(i).type();
    bool ok = in.element() == out.element() && in.rank() == out.rank();
    for (int64_t d = 0; ok && d < in.rank(); ++d) {
      ok = d == dim ? (in.dim(d) == 0 ? out.dim(d) == 0
                                      : out.dim(d) % in.dim(d) == 0 || in.dim(d) % out.dim(d) == 0)
                    : in.dim(d) == out.dim(d);
    }
    if (!ok) {
      return InvalidArgument("'" + op.name_str() + "' result " + std::to_string(i) + " type " +
                             out.ToString() + " does not fit operand type " + in.ToString());
    }
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Work: the operands read and results written in HBM, the data the op sends
// for the pod model, and (reducing ops) one ALU op per element reduced.

int64_t OperandBytes(const ir::Operation& op, int count) {
  int64_t sum = 0;
  for (int i = 0; i < count; ++i) sum += LogicalBytes(op.operand(i).type());
  return sum;
}

Work CollectiveWorkOf(const ir::Operation& op, CollectiveKind kind, int64_t bytes) {
  Work w = ReadsAndWrites(op);
  w.collective = CollectiveWork{kind, bytes};
  if (kind == CollectiveKind::kAllReduce || kind == CollectiveKind::kReduceScatter ||
      kind == CollectiveKind::kReduce) {
    for (const ir::Value& v : op.operands()) {
      if (v.type().is_tensor()) w.AddVector(VectorClass::kAlu, v.type().num_elements());
    }
  }
  return w;
}

Work AllReduceWork(const ir::Operation& op) {
  return CollectiveWorkOf(op, CollectiveKind::kAllReduce, OperandBytes(op, op.num_operands()));
}

Work AllGatherWork(const ir::Operation& op) {
  int64_t bytes = 0;
  for (int i = 0; i < op.num_results(); ++i) bytes += LogicalBytes(op.result(i).type());
  return CollectiveWorkOf(op, CollectiveKind::kAllGather, bytes);
}

Work ReduceScatterWork(const ir::Operation& op) {
  return CollectiveWorkOf(op, CollectiveKind::kReduceScatter, OperandBytes(op, 1));
}

Work AllToAllWork(const ir::Operation& op) {
  return CollectiveWorkOf(op, CollectiveKind::kAllToAll, OperandBytes(op, op.num_operands()));
}

Work PermuteWork(const ir::Operation& op) {
  return CollectiveWorkOf(op, CollectiveKind::kPermute, OperandBytes(op, 1));
}

Work BroadcastWork(const ir::Operation& op) {
  return CollectiveWorkOf(op, CollectiveKind::kBroadcast, OperandBytes(op, op.num_results()));
}

Work CollectiveReduceWork(const ir::Operation& op) {
  return CollectiveWorkOf(op, CollectiveKind::kReduce, OperandBytes(op, op.num_results()));
}

// ---------------------------------------------------------------------------
// The ops.

Status VerifyAllReduce(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(VerifyReducing(op));
  return VerifySameTypes(op);
}

StatusOr<std::vector<Tensor>> EvalAllReduce(EvalContext& ctx, const ir::Operation& op,
                                            std::span<const Tensor> operands) {
  TPUSIM_ASSIGN_OR_RETURN(auto group, RequireGroup(op, ReplicaStrategy(op), GridOf(ctx)));
  return AllReduce(ctx, op, group, operands);
}

TPUSIM_REGISTER_OP({.name = "stablehlo.all_reduce",
                    .verify = VerifyAllReduce,
                    .eval = EvalAllReduce,
                    .work = AllReduceWork,
                    .side_effects = true});

Status VerifyAllGather(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, op.num_operands()));
  if (op.num_operands() == 0) return InvalidArgument("'stablehlo.all_gather' needs operands");
  TPUSIM_ASSIGN_OR_RETURN(int64_t dim, DimAttr(op, "all_gather_dim", op.operand(0).type().rank()));
  return VerifyScaledDim(op, dim);
}

StatusOr<std::vector<Tensor>> EvalAllGather(EvalContext& ctx, const ir::Operation& op,
                                            std::span<const Tensor> operands) {
  TPUSIM_ASSIGN_OR_RETURN(auto group, RequireGroup(op, ReplicaStrategy(op), GridOf(ctx)));
  int64_t dim = op.attr("all_gather_dim").int_value();
  std::vector<Tensor> mine(operands.begin(), operands.end());
  TPUSIM_ASSIGN_OR_RETURN(auto all, Exchange(ctx, op, group, std::move(mine)));
  std::vector<Tensor> results;
  for (int k = 0; k < op.num_results(); ++k) {
    std::vector<Tensor> parts;
    for (const auto& member : all) parts.push_back(member[k]);
    TPUSIM_ASSIGN_OR_RETURN(Tensor r, Concat(parts, dim));
    if (r.type() != op.result(k).type()) {
      return InvalidArgument("gathering from " + std::to_string(group.size()) +
                             " processes gives " + r.type().ToString() + ", but the result is " +
                             op.result(k).type().ToString());
    }
    results.push_back(std::move(r));
  }
  return results;
}

TPUSIM_REGISTER_OP({.name = "stablehlo.all_gather",
                    .verify = VerifyAllGather,
                    .eval = EvalAllGather,
                    .work = AllGatherWork,
                    .side_effects = true});

Status VerifyReduceScatter(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(VerifyReducing(op));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_ASSIGN_OR_RETURN(int64_t dim,
                          DimAttr(op, "scatter_dimension", op.operand(0).type().rank()));
  return VerifyScaledDim(op, dim);
}

StatusOr<std::vector<Tensor>> EvalReduceScatter(EvalContext& ctx, const ir::Operation& op,
                                                std::span<const Tensor> operands) {
  Grid g = GridOf(ctx);
  TPUSIM_ASSIGN_OR_RETURN(auto group, RequireGroup(op, ReplicaStrategy(op), g));
  int64_t dim = op.attr("scatter_dimension").int_value();
  int64_t n = static_cast<int64_t>(group.size());
  if (operands[0].shape()[dim] % n != 0) {
    return InvalidArgument("scatter dimension of size " + std::to_string(operands[0].shape()[dim]) +
                           " does not split into " + std::to_string(n) + " parts");
  }
  TPUSIM_ASSIGN_OR_RETURN(auto reduced, AllReduce(ctx, op, group, operands));
  TPUSIM_ASSIGN_OR_RETURN(auto parts, Split(reduced[0], n, dim));
  Tensor mine = parts[IndexIn(group, g.self())];
  if (mine.type() != op.result(0).type()) {
    return InvalidArgument("scattering over " + std::to_string(n) + " processes gives " +
                           mine.type().ToString() + ", but the result is " +
                           op.result(0).type().ToString());
  }
  return std::vector<Tensor>{std::move(mine)};
}

TPUSIM_REGISTER_OP({.name = "stablehlo.reduce_scatter",
                    .verify = VerifyReduceScatter,
                    .eval = EvalReduceScatter,
                    .work = ReduceScatterWork,
                    .side_effects = true});

Status VerifyAllToAll(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, op.num_operands()));
  if (op.num_operands() == 0) return InvalidArgument("'stablehlo.all_to_all' needs operands");
  int64_t rank = op.operand(0).type().rank();
  TPUSIM_ASSIGN_OR_RETURN(int64_t split, DimAttr(op, "split_dimension", rank));
  TPUSIM_ASSIGN_OR_RETURN(int64_t concat, DimAttr(op, "concat_dimension", rank));
  TPUSIM_ASSIGN_OR_RETURN(ir::Attribute count,
                          GetAttr(op, "split_count", ir::Attribute::Kind::kInt));
  int64_t n = count.int_value();
  for (int i = 0; i < op.num_operands(); ++i) {
    ir::Shape want = op.operand(i).type().shape();
    if (n <= 0 || want.size() != static_cast<size_t>(rank) || want[split] % n != 0) {
      return InvalidArgument("'stablehlo.all_to_all' operand " + std::to_string(i) +
                             " does not split into split_count = " + std::to_string(n) +
                             " parts along dimension " + std::to_string(split));
    }
    want[split] /= n;
    want[concat] *= n;
    TPUSIM_RETURN_IF_ERROR(
        ExpectResultType(op, i, ir::Type::Tensor(op.operand(i).type().element(), want)));
  }
  return Status::Ok();
}

StatusOr<std::vector<Tensor>> EvalAllToAll(EvalContext& ctx, const ir::Operation& op,
                                           std::span<const Tensor> operands) {
  Grid g = GridOf(ctx);
  TPUSIM_ASSIGN_OR_RETURN(auto group, RequireGroup(op, ChannelStrategy(op), g));
  int64_t split = op.attr("split_dimension").int_value();
  int64_t concat = op.attr("concat_dimension").int_value();
  int64_t n = op.attr("split_count").int_value();
  if (static_cast<int64_t>(group.size()) != n) {
    return InvalidArgument("split_count is " + std::to_string(n) + " but the process group has " +
                           std::to_string(group.size()) + " processes");
  }
  std::vector<Tensor> mine(operands.begin(), operands.end());
  TPUSIM_ASSIGN_OR_RETURN(auto all, Exchange(ctx, op, group, std::move(mine)));
  int64_t me = IndexIn(group, g.self());
  std::vector<Tensor> results;
  for (size_t k = 0; k < operands.size(); ++k) {
    std::vector<Tensor> scattered;
    for (const auto& member : all) {
      TPUSIM_ASSIGN_OR_RETURN(auto parts, Split(member[k], n, split));
      scattered.push_back(std::move(parts[me]));
    }
    TPUSIM_ASSIGN_OR_RETURN(Tensor r, Concat(scattered, concat));
    results.push_back(std::move(r));
  }
  return results;
}

TPUSIM_REGISTER_OP({.name = "stablehlo.all_to_all",
                    .verify = VerifyAllToAll,
                    .eval = EvalAllToAll,
                    .work = AllToAllWork,
                    .side_effects = true});

StatusOr<std::vector<Tensor>> Zeros(const ir::Operation& op) { return AllocateResults(op); }

Status VerifyCollectivePermute(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 1));
  TPUSIM_RETURN_IF_ERROR(VerifySameTypes(op));
  TPUSIM_ASSIGN_OR_RETURN(Groups pairs, ReadRows(op, "source_target_pairs"));
  for (const auto& pair : pairs) {
    if (pair.size() != 2) {
      return InvalidArgument("'stablehlo.collective_permute' source_target_pairs must be Nx2");
    }
  }
  return Status::Ok();
}

StatusOr<std::vector<Tensor>> EvalCollectivePermute(EvalContext& ctx, const ir::Operation& op,
                                                    std::span<const Tensor> operands) {
  Grid g = GridOf(ctx);
  TPUSIM_ASSIGN_OR_RETURN(Groups pairs, ReadRows(op, "source_target_pairs"));
  if (pairs.empty()) return Zeros(op);
  TPUSIM_ASSIGN_OR_RETURN(Groups process_pairs,
                          ProcessGroups(pairs, ChannelStrategy(op), g, /*unique=*/false));
  // Everyone named in a pair that shares this process's partition (or
  // replica) meets once; each target then takes its source's operand.
  std::set<ProcessId> members;
  ProcessId source = -1;
  bool in_pairs = false;
  for (const auto& pair : process_pairs) {
    in_pairs |= pair[0] == g.self() || pair[1] == g.self();
  }
  for (const auto& pair : process_pairs) {
    bool same_slice = ChannelStrategy(op) == Strategy::kCrossReplica
                          ? pair[0] % g.partitions == g.partition
                          : pair[0] / g.partitions == g.replica;
    if (!same_slice) continue;
    members.insert(pair[0]);
    members.insert(pair[1]);
    if (pair[1] == g.self()) source = pair[0];
  }
  if (!in_pairs) return Zeros(op);
  std::vector<ProcessId> group(members.begin(), members.end());
  TPUSIM_ASSIGN_OR_RETURN(auto all, Exchange(ctx, op, group, {operands[0]}));
  if (source < 0) return Zeros(op);
  return std::vector<Tensor>{all[IndexIn(group, source)][0]};
}

TPUSIM_REGISTER_OP({.name = "stablehlo.collective_permute",
                    .verify = VerifyCollectivePermute,
                    .eval = EvalCollectivePermute,
                    .work = PermuteWork,
                    .side_effects = true});

// collective_broadcast and collective_reduce may end with an i32 operand of
// roots (has_dynamic_root): root j is the group index of result j's source.
bool HasDynamicRoot(const ir::Operation& op) {
  ir::Attribute a = op.attr("has_dynamic_root");
  return a.kind() == ir::Attribute::Kind::kUnit ||
         (a.kind() == ir::Attribute::Kind::kBool && a.bool_value());
}

Status VerifyRooted(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  int data = op.num_operands() - (HasDynamicRoot(op) ? 1 : 0);
  if (data < 1) return InvalidArgument("'" + op.name_str() + "' needs a data operand");
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, data));
  for (int i = 0; i < data; ++i) {
    TPUSIM_RETURN_IF_ERROR(ExpectResultType(op, i, op.operand(i).type()));
  }
  if (HasDynamicRoot(op) &&
      op.operand(data).type() != ir::Type::Tensor(ir::ElementType::kSI32, {data})) {
    return InvalidArgument("'" + op.name_str() + "' roots operand must be tensor<" +
                           std::to_string(data) + "xi32>");
  }
  return ReadRows(op, "replica_groups").status();
}

// Root group index of each result.
StatusOr<std::vector<int64_t>> Roots(const ir::Operation& op, std::span<const Tensor> operands,
                                     size_t group_size) {
  std::vector<int64_t> roots(op.num_results(), 0);
  if (!HasDynamicRoot(op)) return roots;
  const int32_t* r = operands.back().data<int32_t>();
  for (size_t j = 0; j < roots.size(); ++j) {
    if (r[j] < 0 || static_cast<size_t>(r[j]) >= group_size) {
      return OutOfRange("root " + std::to_string(r[j]) + " is outside a group of " +
                        std::to_string(group_size));
    }
    roots[j] = r[j];
  }
  return roots;
}

StatusOr<std::vector<Tensor>> EvalCollectiveBroadcast(EvalContext& ctx, const ir::Operation& op,
                                                      std::span<const Tensor> operands) {
  TPUSIM_ASSIGN_OR_RETURN(auto group, MyGroup(op, ChannelStrategy(op), GridOf(ctx)));
  if (group.empty()) return Zeros(op);
  TPUSIM_ASSIGN_OR_RETURN(auto roots, Roots(op, operands, group.size()));
  std::vector<Tensor> mine(operands.begin(), operands.begin() + op.num_results());
  TPUSIM_ASSIGN_OR_RETURN(auto all, Exchange(ctx, op, group, std::move(mine)));
  std::vector<Tensor> results;
  for (int j = 0; j < op.num_results(); ++j) results.push_back(all[roots[j]][j]);
  return results;
}

TPUSIM_REGISTER_OP({.name = "stablehlo.collective_broadcast",
                    .verify = VerifyRooted,
                    .eval = EvalCollectiveBroadcast,
                    .work = BroadcastWork,
                    .side_effects = true});

Status VerifyCollectiveReduce(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(VerifyReducing(op));
  return VerifyRooted(op);
}

StatusOr<std::vector<Tensor>> EvalCollectiveReduce(EvalContext& ctx, const ir::Operation& op,
                                                   std::span<const Tensor> operands) {
  Grid g = GridOf(ctx);
  TPUSIM_ASSIGN_OR_RETURN(auto group, MyGroup(op, ChannelStrategy(op), g));
  if (group.empty()) return Zeros(op);
  TPUSIM_ASSIGN_OR_RETURN(auto roots, Roots(op, operands, group.size()));
  TPUSIM_ASSIGN_OR_RETURN(auto reduced,
                          AllReduce(ctx, op, group, operands.first(op.num_results())));
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> results, Zeros(op));
  int64_t me = IndexIn(group, g.self());
  for (int j = 0; j < op.num_results(); ++j) {
    if (roots[j] == me) results[j] = std::move(reduced[j]);
  }
  return results;
}

TPUSIM_REGISTER_OP({.name = "stablehlo.collective_reduce",
                    .verify = VerifyCollectiveReduce,
                    .eval = EvalCollectiveReduce,
                    .work = CollectiveReduceWork,
                    .side_effects = true});

}  // namespace

StatusOr<std::vector<std::vector<ProcessId>>> CollectiveGroups(const ir::Operation& op,
                                                               int64_t num_replicas,
                                                               int64_t num_partitions) {
  const Grid grid{num_replicas, num_partitions, 0, 0};
  const std::string_view name = op.name_str();
  if (name == "stablehlo.collective_permute" || name == "stablehlo.send" ||
      name == "stablehlo.recv") {
    TPUSIM_ASSIGN_OR_RETURN(Groups pairs, ReadRows(op, "source_target_pairs"));
    return ProcessGroups(pairs, ChannelStrategy(op), grid, /*unique=*/false);
  }
  const bool replica_strategy = name == "stablehlo.all_reduce" || name == "stablehlo.all_gather" ||
                                name == "stablehlo.reduce_scatter";
  TPUSIM_ASSIGN_OR_RETURN(Groups rows, ReadRows(op, "replica_groups"));
  return ProcessGroups(rows, replica_strategy ? ReplicaStrategy(op) : ChannelStrategy(op), grid,
                       /*unique=*/true);
}

}  // namespace tpusim::ops

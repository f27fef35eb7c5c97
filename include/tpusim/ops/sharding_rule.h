// How an op's dimensions relate across its operands and results, for the
// SPMD partitioner (src/spmd): Shardy's op sharding rules. Each dimension
// of each operand and result belongs to a factor (or to none); sharding a
// factor's dimensions alike on every operand lets each device compute its
// part locally. A factor found only in operands is a reduction: its partial
// results are combined across the devices that split it.
#ifndef TPUSIM_OPS_SHARDING_RULE_H_
#define TPUSIM_OPS_SHARDING_RULE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tpusim/ir/ir.h"

namespace tpusim::ops {

struct ShardingRule {
  // A factor whose operand dimension is read through a sliding window
  // (convolution, reduce_window): the result dimension has `output`
  // windows of `size` elements (dilation included) every `stride` over an
  // operand of `input` elements padded by `pad_lo` in front. Split k ways,
  // each device's windows then start `pad_lo` before its own part and end
  // HaloHi(k) after it: the rows it borrows from its neighbours (a halo;
  // negative: rows it drops).
  struct Window {
    int64_t input = 0, output = 0, size = 1, stride = 1, pad_lo = 0;
    int64_t padding_row = 0;  // the row of the rule's `padding` attribute

    int64_t HaloLo() const { return pad_lo; }
    int64_t HaloHi() const { return size - stride - pad_lo; }
    // Whether k devices can each compute their windows from their part and
    // their neighbours' edges: every part holds the same number of windows,
    // each starting where the previous part's stride left off.
    bool Splits(int64_t k) const {
      if (k <= 0 || input % k != 0 || output % k != 0) return false;
      const int64_t part = input / k;
      return part == output / k * stride && HaloLo() <= part && -HaloLo() <= part &&
             HaloHi() <= part && -HaloHi() <= part;
    }
  };
  struct Factor {
    int64_t size = 1;
    // False for a dimension the op needs whole (a reshape's minor split
    // dimensions): it is never sharded.
    bool shardable = true;
    // False where a split that does not divide the size would misplace
    // rows: its last devices' padding would land amid the result's rows (a
    // reshape's merged dimensions) or nobody knows (a custom kernel's).
    bool splits_unevenly = true;
    std::optional<Window> window;
  };
  std::vector<Factor> factors;
  // Per operand (and result), per dimension: its factor, or -1 for none.
  std::vector<std::vector<int>> operands, results;
  // Per result (or no entry): factors it sums over though other results
  // keep them (flash attention's dk and dv sum over the query rows its dq
  // keeps). Split, they leave that result partial, combined by `combiner`;
  // they must not split unevenly, as their padding would join the sums.
  std::vector<std::vector<int>> summed;
  // The elementwise op ("stablehlo.add") that combines partial results of a
  // reduction factor (or a summed one); empty if reduction factors must stay
  // whole.
  std::string combiner;
  // Attributes holding one size per dimension of the first operand
  // (dynamic_slice's and gather's slice_sizes, slice's limit_indices): an
  // entry that is the whole dimension becomes the device's part of it.
  std::vector<std::string> local_sizes;
  // The attribute of [lo, hi] rows that windowed factors' padding is in; a
  // device's op pads nothing where its halo brings the rows instead.
  std::string padding;
  // Per operand: the operand holding the value it reads as where there is
  // none (beyond a window's edges, in the padding of a reduction factor
  // split unevenly), or -1 (or no entry) for zero.
  std::vector<int> pad_values;

  // Adds a factor of `size` and returns its index.
  int Add(int64_t size, bool shardable = true) {
    factors.push_back({size, shardable});
    return static_cast<int>(factors.size()) - 1;
  }
};

// An op's rule from its types and attributes; nullopt: no rule (the op is
// computed on whole arrays).
using ShardingRuleFn = std::function<std::optional<ShardingRule>(const ir::Operation& op)>;

// The rule of an elementwise op: one factor per dimension, shared by every
// operand and result. REQUIRES: operands and results have one shape.
ShardingRule ElementwiseShardingRule(const ir::Operation& op);

// The rule of an op whose operands of the first result's rank line up with
// it dimension by dimension (slice, pad, concatenate, sort, ...); other
// operands (scalars, start indices) have no factors. The dimensions in
// `whole`, which the op changes or reads across, are never sharded.
ShardingRule PositionalShardingRule(const ir::Operation& op, const std::vector<int64_t>& whole);

// The rule an op declares in its `sdy.sharding_rule` attribute (a
// `#sdy.op_sharding_rule`, as JAX puts on custom calls); nullopt without
// one, or when it does not fit the op's types. Compound dimensions and
// reduction, need_replication and permutation factors stay whole: how a
// custom kernel's partial results combine is not written down, nor what it
// makes of padding, so no factor splits unevenly.
std::optional<ShardingRule> DeclaredShardingRule(const ir::Operation& op);

// The op of a reduction body that is one elementwise op on its two
// arguments ("stablehlo.add"): what partial results combine with; empty
// for any other body.
std::string CombinerOf(const ir::Region& body);

// Whether `v` is a constant of zeros: an add combines with it once or many
// times alike.
bool IsZeroConstant(ir::Value v);

}  // namespace tpusim::ops

#endif  // TPUSIM_OPS_SHARDING_RULE_H_

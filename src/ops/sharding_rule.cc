#include "tpusim/ops/sharding_rule.h"

#include <algorithm>

namespace tpusim::ops {

ShardingRule ElementwiseShardingRule(const ir::Operation& op) {
  ShardingRule rule;
  std::vector<int> dims;
  for (int64_t size : op.result(0).type().shape()) dims.push_back(rule.Add(size));
  rule.operands.assign(op.num_operands(), dims);
  rule.results.assign(op.num_results(), dims);
  return rule;
}

ShardingRule PositionalShardingRule(const ir::Operation& op, const std::vector<int64_t>& whole) {
  ShardingRule rule;
  const ir::Shape& shape = op.result(0).type().shape();
  std::vector<int> dims;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    const bool shardable = std::find(whole.begin(), whole.end(), d) == whole.end();
    dims.push_back(rule.Add(shape[d], shardable));
  }
  for (ir::Value v : op.operands()) {
    const bool lines_up =
        v.type().is_tensor() && v.type().rank() == static_cast<int64_t>(shape.size());
    rule.operands.push_back(
        lines_up ? dims : std::vector<int>(v.type().is_tensor() ? v.type().rank() : 0, -1));
  }
  for (ir::Value r : op.results()) {
    const bool lines_up = r.type().is_tensor() && r.type().shape() == shape;
    rule.results.push_back(
        lines_up ? dims : std::vector<int>(r.type().is_tensor() ? r.type().rank() : 0, -1));
  }
  return rule;
}

}  // namespace tpusim::ops

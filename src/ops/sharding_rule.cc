#include "tpusim/ops/sharding_rule.h"

namespace tpusim::ops {

ShardingRule ElementwiseShardingRule(const ir::Operation& op) {
  ShardingRule rule;
  std::vector<int> dims;
  for (int64_t size : op.result(0).type().shape()) dims.push_back(rule.Add(size));
  rule.operands.assign(op.num_operands(), dims);
  rule.results.assign(op.num_results(), dims);
  return rule;
}

}  // namespace tpusim::ops

#include "tpusim/ops/sharding_rule.h"

#include <algorithm>
#include <map>
#include <string>

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

namespace {

// Factor indices by name, with the rule's factors added.
std::map<std::string, int> AddFactors(const ir::Attribute& rule, ShardingRule& out) {
  std::map<std::string, int> index;
  for (const auto& [name, size] : rule.Get("factor_sizes").fields()) {
    bool shardable = true;
    for (const char* key : {"reduction", "need_replication", "permutation"}) {
      if (ir::Attribute list = rule.Get(key)) {
        for (const ir::Attribute& f : list.array()) shardable &= f.str() != name;
      }
    }
    index[name] = out.Add(size.int_value(), shardable);
    out.factors.back().splits_unevenly = false;  // what the kernel does with padding is unknown
  }
  return index;
}

// Per value of `types`, per dimension, its factor from `specs`; false if
// they do not fit.
bool MapDims(const ir::Attribute& specs, const std::vector<ir::Type>& types,
             const std::map<std::string, int>& index, ShardingRule& rule,
             std::vector<std::vector<int>>& out) {
  if (specs.kind() != ir::Attribute::Kind::kArray || specs.array().size() != types.size())
    return false;
  for (size_t v = 0; v < types.size(); ++v) {
    const std::vector<ir::Attribute>& dims = specs.array()[v].array();
    const int64_t rank = types[v].is_tensor() ? types[v].rank() : 0;
    if (static_cast<int64_t>(dims.size()) != rank) return false;
    std::vector<int>& mapped = out.emplace_back();
    for (int64_t d = 0; d < rank; ++d) {
      auto it = index.find(dims[d].str());
      const bool fits = it != index.end() && rule.factors[it->second].size == types[v].dim(d);
      mapped.push_back(fits ? it->second : -1);  // compound dimensions stay whole
    }
  }
  return true;
}

}  // namespace

std::optional<ShardingRule> DeclaredShardingRule(const ir::Operation& op) {
  const ir::Attribute rule = op.attr("sdy.sharding_rule");
  if (rule.kind() != ir::Attribute::Kind::kStruct || rule.name() != "sdy.op_sharding_rule") {
    return std::nullopt;
  }
  ShardingRule out;
  const std::map<std::string, int> index = AddFactors(rule, out);
  if (!MapDims(rule.Get("operands"), TypesOf(op.operands()), index, out, out.operands) ||
      !MapDims(rule.Get("results"), TypesOf(op.results()), index, out, out.results)) {
    return std::nullopt;
  }
  return out;
}

std::string CombinerOf(const ir::Region& body) {
  const ir::Block& b = body.front();
  if (b.ops().size() != 2 || b.num_arguments() != 2) return "";
  const ir::Operation& op = *b.ops()[0];
  const ir::Operation& ret = *b.ops()[1];
  if (op.num_operands() != 2 || op.num_results() != 1 || ret.num_operands() != 1 ||
      ret.operand(0) != op.result(0)) {
    return "";
  }
  const bool args = (op.operand(0) == b.argument(0) && op.operand(1) == b.argument(1)) ||
                    (op.operand(0) == b.argument(1) && op.operand(1) == b.argument(0));
  return args ? op.name_str() : "";
}

bool IsZeroConstant(ir::Value v) {
  const ir::Operation* def = v.defining_op();
  if (def == nullptr || def->name_str() != "stablehlo.constant") return false;
  ir::Attribute value = def->attr("value");
  if (value.kind() != ir::Attribute::Kind::kDenseElements) return false;
  const std::vector<uint8_t>& bytes = value.bytes();
  return std::all_of(bytes.begin(), bytes.end(), [](uint8_t b) { return b == 0; });
}

}  // namespace tpusim::ops

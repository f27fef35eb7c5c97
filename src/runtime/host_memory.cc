#include "runtime/host_memory.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "tpusim/base/bytes.h"
#include "tpusim/tensor/tensor.h"

namespace tpusim::runtime {
namespace {

int64_t HostBytes(const ir::Type& type) {
  if (type.is_tuple()) {
    int64_t sum = 0;
    for (const ir::Type& e : type.tuple_elements()) sum += HostBytes(e);
    return sum;
  }
  if (!type.is_tensor()) return 0;
  int64_t n = ir::StorageBytes(type.element());
  for (int64_t d : type.shape()) n *= std::max<int64_t>(d, 0);
  return n;
}

// Walks blocks as the interpreter runs them; callees' peaks are memoized
// (and a recursive call counts nothing more, since it cannot be sized).
class Walker {
 public:
  explicit Walker(const ir::Module& module) : module_(module) {}

  // The peak of `block` beyond its arguments, which the caller holds.
  int64_t BlockPeak(const ir::Block& block) {
    const auto& ops = block.ops();
    std::unordered_map<int, int> last_use;
    std::unordered_map<int, int64_t> bytes;
    std::vector<int> uses;
    for (int i = 0; i < static_cast<int>(ops.size()); ++i) {
      uses.clear();
      CollectUses(*ops[i], uses);
      for (int id : uses) last_use[id] = i;
      for (ir::Value r : ops[i]->results()) {
        last_use[r.id()] = i;
        bytes[r.id()] = HostBytes(r.type());
      }
    }
    std::vector<std::vector<int>> dead(ops.size());
    for (const auto& [id, i] : last_use) {
      if (bytes.count(id)) dead[i].push_back(id);
    }
    int64_t live = 0, peak = 0;
    for (size_t i = 0; i < ops.size(); ++i) {
      int64_t results = 0;
      for (ir::Value r : ops[i]->results()) results += bytes[r.id()];
      peak = std::max(peak, live + NestedPeak(*ops[i]) + results);
      live += results;
      for (int id : dead[i]) live -= bytes[id];
    }
    return peak;
  }

  int64_t FunctionPeak(const ir::Function& f) {
    auto it = memo_.find(&f);
    if (it != memo_.end()) return it->second;
    memo_[&f] = 0;  // a recursive call sees nothing more
    return memo_[&f] = BlockPeak(f.entry());
  }

 private:
  static void CollectUses(const ir::Operation& op, std::vector<int>& ids) {
    for (ir::Value v : op.operands()) ids.push_back(v.id());
    for (int r = 0; r < op.num_regions(); ++r) {
      for (int b = 0; b < op.region(r).num_blocks(); ++b) {
        for (const auto& nested : op.region(r).block(b).ops()) CollectUses(*nested, ids);
      }
    }
  }

  // What running `op`'s regions or callee adds while it runs: the largest of
  // them (a loop's condition and body run one at a time), with the values
  // the region receives as block arguments.
  int64_t NestedPeak(const ir::Operation& op) {
    int64_t peak = 0;
    for (int r = 0; r < op.num_regions(); ++r) {
      for (int b = 0; b < op.region(r).num_blocks(); ++b) {
        const ir::Block& block = op.region(r).block(b);
        int64_t args = 0;
        for (ir::Value a : block.arguments()) args += HostBytes(a.type());
        peak = std::max(peak, args + BlockPeak(block));
      }
    }
    if (op.name_str() == "func.call") {
      const ir::Attribute callee = op.attr("callee");
      if (callee.kind() == ir::Attribute::Kind::kSymbolRef) {
        if (const ir::Function* f = module_.Lookup(callee.str())) {
          peak = std::max(peak, FunctionPeak(*f));
        }
      }
    }
    return peak;
  }

  const ir::Module& module_;
  std::unordered_map<const ir::Function*, int64_t> memo_;
};

}  // namespace

HostNeed HostPeakBytes(const ir::Module& module, const ir::Function& f) {
  HostNeed need;
  for (ir::Value a : f.entry().arguments()) need.argument_bytes += HostBytes(a.type());
  need.peak_bytes = need.argument_bytes + Walker(module).FunctionPeak(f);
  return need;
}

Status CheckHostMemory(int64_t need, const std::string& what) {
  const int64_t free = HostMemoryLimit() - HostMemoryInUse();
  if (need <= free) return Status::Ok();
  return ResourceExhausted("computing the values needs about " + FormatBinaryBytes(need) +
                           " of host memory (" + what + ") but " + FormatBinaryBytes(free) +
                           " is left of what tpusim allows itself (80% of the host's); time the "
                           "program with --timing-only, or give it a smaller slice or batch");
}

}  // namespace tpusim::runtime

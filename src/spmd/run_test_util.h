// Runs a program whole and partitioned, for the SPMD tests (header-only;
// tests only). Programs take no arguments: their inputs are constants and
// iotas, sharded by annotations.
#ifndef TPUSIM_SPMD_RUN_TEST_UTIL_H_
#define TPUSIM_SPMD_RUN_TEST_UTIL_H_

#include <string>
#include <vector>

#include "tpusim/exec/grid.h"
#include "tpusim/exec/interpreter.h"
#include "tpusim/ir/sharding.h"
#include "tpusim/ops/collectives.h"
#include "tpusim/tensor/tile.h"

namespace tpusim::test {

struct Outcome {
  Status status;
  std::vector<Tensor> values;
};

inline Outcome RunWhole(const ir::Module& module, const std::string& function) {
  exec::Interpreter interpreter(module, {});
  StatusOr<std::vector<Tensor>> values = interpreter.Run(function, {});
  if (!values.ok()) return {values.status(), {}};
  return {Status::Ok(), std::move(*values)};
}

// The global array that `tiles` (one per device) make under result `i`'s
// sharding in `module`, or device 0's value if it has none.
inline Tensor Assemble(const ir::Module& module, const ir::Function& f, int i,
                       const std::vector<Tensor>& tiles) {
  auto s = ir::ResultSharding(module, f, i);
  if (!s.ok() || !*s || (*s)->kind != ir::HloSharding::Kind::kTiled) return tiles[0];
  const ir::Shape shape = ir::GlobalShape(tiles[0].shape(), **s, f.result_attrs()[i]);
  Tensor whole = *Tensor::Allocate(ir::Type::Tensor(tiles[0].element(), shape));
  for (size_t d = 0; d < tiles.size(); ++d) {
    InsertTile(tiles[d], *ir::TileOffset(**s, tiles[0].shape(), static_cast<int64_t>(d)), whole);
  }
  return whole;
}

// Runs the partitioned `function` on every device and puts its results'
// tiles back together.
inline Outcome RunPartitioned(const ir::Module& module, const std::string& function) {
  const ir::Function& f = *module.Lookup(function);
  const int64_t n = module.attrs().Get("mhlo.num_partitions").int_value();
  ops::Collectives collectives(1, n);
  exec::GridProgram program{.functions = std::vector<std::string>(n, function),
                            .args = std::vector<std::vector<Tensor>>(n)};
  auto per_device = exec::RunGrid(module, {}, collectives, program);
  if (!per_device.ok()) return {per_device.status(), {}};
  Outcome out;
  for (int i = 0; i < static_cast<int>(f.type().results.size()); ++i) {
    std::vector<Tensor> tiles;
    for (const auto& device : *per_device) tiles.push_back(device[i]);
    out.values.push_back(Assemble(module, f, i, tiles));
  }
  return out;
}

}  // namespace tpusim::test

#endif  // TPUSIM_SPMD_RUN_TEST_UTIL_H_

// Runs a program whole and partitioned, for the SPMD tests (header-only;
// tests only). Programs take no arguments: their inputs are constants and
// iotas, sharded by annotations.
#ifndef TPUSIM_SPMD_RUN_TEST_UTIL_H_
#define TPUSIM_SPMD_RUN_TEST_UTIL_H_

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "tpusim/exec/grid.h"
#include "tpusim/exec/interpreter.h"
#include "tpusim/ir/sharding.h"
#include "tpusim/numerics/float_formats.h"
#include "tpusim/ops/collectives.h"
#include "tpusim/tensor/tile.h"

namespace tpusim::test {

struct Outcome {
  Status status;
  std::vector<Tensor> values;
};

// Whether `split` holds `whole`'s values: bit for bit, but for real floats
// up to the order of a sum. The host's matmul kernels (oneDNN) pick their
// summation order by shape, so a device's rows may sum in another order
// than the whole array's: within a few units in the last place of the
// result's largest magnitude (1e-5 of it for f32 and wider).
inline bool SameValues(const Tensor& whole, const Tensor& split) {
  if (whole.BitwiseEquals(split)) return true;
  const ir::ElementType t = whole.element();
  if (!ir::IsFloat(t) || split.element() != t || split.shape() != whole.shape()) return false;
  const int bits = ir::BitWidth(t), w = ir::StorageBytes(t);
  const double ulp = bits >= 32 ? 1e-5 : bits == 16 ? 2 * std::ldexp(1.0, -7) : 0.5;
  double scale = 1;
  for (int64_t i = 0; i < whole.num_elements(); ++i) {
    const double v = numerics::LoadAsDouble(t, whole.raw() + i * w);
    if (std::isfinite(v)) scale = std::max(scale, std::abs(v));
  }
  for (int64_t i = 0; i < whole.num_elements(); ++i) {
    const double a = numerics::LoadAsDouble(t, whole.raw() + i * w);
    const double b = numerics::LoadAsDouble(t, split.raw() + i * w);
    if (a == b || (std::isnan(a) && std::isnan(b))) continue;
    if (!(std::abs(a - b) <= ulp * scale)) return false;
  }
  return true;
}

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

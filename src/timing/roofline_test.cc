// Every op the conformance programs use is priced (or listed as not yet), and
// no price breaks the roofline: an op never runs faster than its FLOPs at
// the device's peak or its bytes at full HBM bandwidth, on any preset chip.
// Then a few prices worked out by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "testing/test_util.h"
#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/hw/chip.h"
#include "tpusim/hw/cost_model.h"
#include "tpusim/ops/op_def.h"
#include "tpusim/timing/timing.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::timing {
namespace {

namespace fs = std::filesystem;
using test::ReadFile;

// Ops the conformance programs use that the model cannot price yet: it has
// no model of the infeed/outfeed streams (send/recv with the host are
// priced on the host link), and interpreter.run_parallel runs several
// processes, so no one device's time.
const std::set<std::string>& NotPricedYet() {
  static const std::set<std::string> ops = {
      "interpreter.run_parallel",
      "stablehlo.infeed",
      "stablehlo.outfeed",
  };
  return ops;
}

struct Program {
  std::string file;
  std::unique_ptr<ir::Module> module;
};

// The verified conformance programs (each `// -----` case of a file is one),
// parsed once. Programs in quantized types do not parse (tpusim does not
// support them) and are left out.
const std::vector<Program>& ConformancePrograms() {
  static const std::vector<Program>* programs = [] {
    auto* out = new std::vector<Program>;
    for (const fs::path& file : test::ConformanceFiles()) {
      for (frontend::ParsedCase& c : frontend::ParseStableHloCases(ReadFile(file), file.string())) {
        if (!c.module.ok()) continue;
        Status verified = verify::VerifyModule(**c.module);
        EXPECT_TRUE(verified.ok()) << verified.ToString();
        if (!verified.ok()) continue;
        out->push_back({file.filename().string() + ":" + std::to_string(c.first_line),
                        std::move(*c.module)});
      }
    }
    return out;
  }();
  return *programs;
}

void ForEachOp(const ir::Block& block, const std::function<void(const ir::Operation&)>& fn) {
  for (const auto& op : block.ops()) {
    fn(*op);
    for (int r = 0; r < op->num_regions(); ++r) {
      for (int b = 0; b < op->region(r).num_blocks(); ++b) ForEachOp(op->region(r).block(b), fn);
    }
  }
}

void ForEachOp(const ir::Module& module, const std::function<void(const ir::Operation&)>& fn) {
  for (const auto& f : module.functions()) ForEachOp(f->entry(), fn);
}

// The least time `w` can take on `chip`, unit by unit: its matmuls at the
// device's MXU peak (at the best int8/fp8 rate), all its FLOPs at the MXU and
// vector peaks together, and its logical bytes at HBM bandwidth.
struct Roofline {
  double mxu_s = 0, flops_s = 0, hbm_s = 0;
};

Roofline RooflineOf(const hw::ChipSpec& chip, const ops::Work& w) {
  const double cores = hw::CoresPerDevice(chip);
  const double best_rate = std::max({1.0, chip.mxu.int8_rate, chip.mxu.fp8_rate});
  const double mxu_peak = 2.0 * static_cast<double>(chip.MacsPerCyclePerCore()) * cores *
                          chip.clock_hz * best_rate;
  const double vector_peak = static_cast<double>(chip.vpu.lanes) * chip.vpu.sublanes * cores *
                             chip.clock_hz *
                             std::max(chip.vpu.alu_ops_per_cycle,
                                      chip.vpu.transcendental_ops_per_cycle);
  Roofline r;
  double matmul_flops = 0;
  for (const ops::MatmulWork& mm : w.matmuls) matmul_flops += static_cast<double>(mm.flops());
  r.mxu_s = matmul_flops / mxu_peak;
  r.flops_s = static_cast<double>(w.flops) / (mxu_peak + vector_peak);
  r.hbm_s = static_cast<double>(w.bytes_read() + w.bytes_written()) /
            chip.memory.hbm_bytes_per_s;
  return r;
}

// Checks one op's price on one chip; false (after a failure naming the op)
// when the price is impossible.
bool CheckPrice(const hw::ChipSpec& chip, const ir::Operation& op, const ops::Work& w,
                const std::string& where) {
  const hw::OpCost c = hw::PriceWork(chip, w);
  const std::string what = where + " " + op.name_str() + " on " + chip.name;
  bool ok = std::isfinite(c.seconds) && c.seconds >= 0;
  for (double s : c.unit_seconds) ok = ok && std::isfinite(s) && s >= 0;
  EXPECT_TRUE(ok) << what << ": time " << c.seconds;
  if (w.free) {
    EXPECT_EQ(c.seconds, 0) << what;
    EXPECT_TRUE(w.matmuls.empty() && w.flops == 0) << what << ": free but does work";
    return ok && c.seconds == 0;
  }
  const Roofline r = RooflineOf(chip, w);
  // Slack for rounding only: every bound is a sum of the same few terms.
  const double t = c.seconds * (1 + 1e-9);
  EXPECT_GE(t, r.mxu_s) << what << ": faster than the MXU peak";
  EXPECT_GE(t, r.flops_s) << what << ": " << w.flops << " FLOPs faster than the peak";
  EXPECT_GE(t, r.hbm_s) << what << ": faster than HBM bandwidth";
  EXPECT_GE(t, chip.op_overhead_s) << what << ": below the launch overhead";
  return ok && t >= r.mxu_s && t >= r.flops_s && t >= r.hbm_s && t >= chip.op_overhead_s;
}

TEST(RooflineTest, NoConformanceOpBeatsTheRoofline) {
  const std::vector<Program>& programs = ConformancePrograms();
  ASSERT_GT(programs.size(), 250u) << "conformance programs not found under "
                                   << TPUSIM_SHARED_DIR;
  int64_t checked = 0, failed = 0;
  for (const Program& p : programs) {
    ForEachOp(*p.module, [&](const ir::Operation& op) {
      const ops::OpDef* def = ops::OpRegistry::Lookup(op.name());
      if (def == nullptr || def->work == nullptr || failed > 20) return;
      const ops::Work w = def->work(op);
      for (const hw::ChipSpec& chip : hw::Presets()) {
        ++checked;
        if (!CheckPrice(chip, op, w, p.file + ":" + op.loc().ToString())) ++failed;
      }
    });
  }
  EXPECT_GT(checked, 10000);
}

TEST(RooflineTest, EveryConformanceOpIsPricedOrListed) {
  std::set<std::string> used, unpriced;
  for (const Program& p : ConformancePrograms()) {
    ForEachOp(*p.module, [&](const ir::Operation& op) {
      used.insert(op.name_str());
      const ops::OpDef* def = ops::OpRegistry::Lookup(op.name());
      if (def == nullptr || def->work == nullptr || def->work(op).unpriced) {
        unpriced.insert(op.name_str());
      }
    });
  }
  ASSERT_GT(used.size(), 50u);
  for (const std::string& name : unpriced) {
    EXPECT_TRUE(NotPricedYet().count(name)) << name << " has no work rule";
  }
  // The list shrinks as rules are written.
  for (const std::string& name : NotPricedYet()) {
    EXPECT_TRUE(unpriced.count(name)) << name << " is priced now (or unused); unlist it";
  }
}

// ------------------------------------------------------------ hand-priced ops

// The cost of the first op of @main in `text` on the preset `chip`.
struct Priced {
  std::unique_ptr<ir::Module> module;
  const ir::Operation* op = nullptr;
  ops::Work work;
  hw::OpCost cost;
  hw::ChipSpec chip;
};

Priced PriceFirstOp(const std::string& text, const std::string& chip_name) {
  Priced p;
  auto module = frontend::ParseStableHlo(text, "test.mlir");
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok()) return p;
  p.module = std::move(*module);
  Status verified = verify::VerifyModule(*p.module);
  EXPECT_TRUE(verified.ok()) << verified.ToString();
  p.chip = hw::FindPreset(chip_name).value();
  p.op = p.module->Lookup("main")->entry().ops().front().get();
  const ops::OpDef* def = ops::OpRegistry::Lookup(p.op->name());
  EXPECT_TRUE(def != nullptr && def->work != nullptr) << p.op->name_str();
  if (def == nullptr || def->work == nullptr) return p;
  p.work = def->work(*p.op);
  bool priced = false;
  p.cost = PriceOp(p.chip, *p.op, {}, nullptr, &priced);
  EXPECT_TRUE(priced);
  return p;
}

// `op` applied to `operands` arguments of `type`, returned.
std::string Program1(const std::string& op, int operands, const std::string& type,
                     const std::string& result_type = "") {
  const std::string result = result_type.empty() ? type : result_type;
  std::string args, uses, arg_types;
  for (int i = 0; i < operands; ++i) {
    args += (i ? ", " : "") + ("%a" + std::to_string(i)) + ": " + type;
    uses += (i ? ", " : "") + ("%a" + std::to_string(i));
    arg_types += (i ? ", " : "") + type;
  }
  return "func.func @main(" + args + ") -> " + result + " {\n  %0 = \"" + op + "\"(" + uses +
         ") : (" + arg_types + ") -> " + result + "\n  return %0 : " + result + "\n}\n";
}

double Slots(const hw::ChipSpec& chip) {
  return static_cast<double>(chip.vpu.lanes) * chip.vpu.sublanes * hw::CoresPerDevice(chip) *
         chip.clock_hz;
}

// Reading two 16 MiB operands and writing one at 819 GB/s dwarfs 4M adds.
TEST(RooflineTest, LargeF32AddOnV5eIsMemoryBound) {
  Priced p = PriceFirstOp(Program1("stablehlo.add", 2, "tensor<2048x2048xf32>"), "v5e");
  const double bytes = 3.0 * 2048 * 2048 * 4;
  EXPECT_EQ(p.cost.hbm_bytes, 3 * 16 * 1024 * 1024);
  EXPECT_EQ(p.cost.padding_bytes, 0);
  EXPECT_EQ(p.cost.bound, hw::Bound::kMemory);
  EXPECT_NEAR(p.cost.seconds, bytes / 819e9 + p.chip.op_overhead_s, 1e-12);
  EXPECT_NEAR(p.cost.unit_seconds[static_cast<int>(hw::Unit::kVector)],
              2048.0 * 2048 / p.chip.vpu.alu_ops_per_cycle / Slots(p.chip), 1e-15);
  EXPECT_EQ(p.cost.flops, 2048 * 2048);
}

// A 7x device is one TensorCore: half the chip's 7.38 TB/s, at the 87%
// of it that a large copy measures, and 7x's measured fixed cost per op.
TEST(RooflineTest, A7xDeviceStreamsHbmAtItsCoresMeasuredRate) {
  Priced p = PriceFirstOp(Program1("stablehlo.add", 2, "tensor<2048x2048xf32>"), "7x");
  const double bytes = 3.0 * 2048 * 2048 * 4;
  EXPECT_EQ(p.cost.bound, hw::Bound::kMemory);
  EXPECT_NEAR(p.cost.unit_seconds[static_cast<int>(hw::Unit::kHbm)], bytes / 3210e9, 1e-12);
  EXPECT_NEAR(p.cost.seconds, bytes / 3210e9 + 1.73e-6, 1e-12);
}

// 5 x 100 f32 fills 5 of a tile's 8 rows and 100 of its 128 lanes: HBM
// moves whole tiles and the vector unit works on them.
TEST(RooflineTest, PartialTilesArePadded) {
  Priced p = PriceFirstOp(Program1("stablehlo.add", 2, "tensor<5x100xf32>"), "v5e");
  EXPECT_EQ(p.cost.bytes_read + p.cost.bytes_written, 3 * 5 * 100 * 4);
  EXPECT_EQ(p.cost.hbm_bytes, 3 * 8 * 128 * 4);
  EXPECT_EQ(p.cost.padding_bytes, 3 * (8 * 128 - 5 * 100) * 4);
  EXPECT_NEAR(p.cost.unit_seconds[static_cast<int>(hw::Unit::kVector)],
              8.0 * 128 / p.chip.vpu.alu_ops_per_cycle / Slots(p.chip), 1e-18);
}

// A dimension of size 1 is not tiled: [64, 1, 128] bf16 is 64 rows of 128
// lanes, not 64 tiles of (16, 128).
TEST(RooflineTest, DimensionsOfSizeOneAreNotPadded) {
  Priced p = PriceFirstOp(Program1("stablehlo.add", 2, "tensor<64x1x128xbf16>"), "v5e");
  EXPECT_EQ(p.cost.padding_bytes, 0);
  EXPECT_EQ(p.cost.hbm_bytes, 3 * 64 * 128 * 2);
}

// exp occupies the vector unit's slower transcendental path, add its ALUs.
TEST(RooflineTest, TranscendentalsCostMoreVectorTimeThanAdds) {
  const std::string type = "tensor<1024x1024xf32>";
  Priced e = PriceFirstOp(Program1("stablehlo.exponential", 1, type), "v6e");
  Priced a = PriceFirstOp(Program1("stablehlo.add", 2, type), "v6e");
  const int v = static_cast<int>(hw::Unit::kVector);
  EXPECT_NEAR(e.cost.unit_seconds[v], 1024.0 * 1024 / e.chip.vpu.transcendental_ops_per_cycle /
                                          Slots(e.chip), 1e-15);
  EXPECT_NEAR(e.cost.unit_seconds[v] / a.cost.unit_seconds[v],
              e.chip.vpu.alu_ops_per_cycle / e.chip.vpu.transcendental_ops_per_cycle, 1e-9);
}

// A 16384 x 6144 by 6144 x 24576 bf16 matmul (a 22B model's MLP on one v4
// chip) overflows v4's 16 MiB of VMEM. With K streamed in 512-deep chunks,
// 1536 x 1536 f32 output blocks fit (9 MiB + 4 x 1536 x 512 x 2 bytes), so
// LHS is re-read for 15 more column blocks and RHS for 10 more row blocks;
// the MXU, not HBM, stays the bound.
TEST(RooflineTest, LargeMatmulTilesStreamKAndStayMxuBound) {
  const std::string program =
      "func.func @main(%a: tensor<16384x6144xbf16>, %b: tensor<6144x24576xbf16>) -> "
      "tensor<16384x24576xf32> {\n"
      "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : "
      "(tensor<16384x6144xbf16>, tensor<6144x24576xbf16>) -> tensor<16384x24576xf32>\n"
      "  return %0 : tensor<16384x24576xf32>\n}\n";
  Priced p = PriceFirstOp(program, "v4");
  EXPECT_EQ(p.cost.tiling_bytes, (15LL * 16384 * 6144 + 10LL * 6144 * 24576) * 2);
  EXPECT_EQ(p.cost.bound, hw::Bound::kMxu);
}

// (a + bi)(c + di) = (ac - bd) + (ad + bc)i.
TEST(RooflineTest, ComplexMultiplyIsFourMultipliesAndTwoAdds) {
  Priced p = PriceFirstOp(Program1("stablehlo.multiply", 2, "tensor<256xcomplex<f32>>"), "v5e");
  EXPECT_EQ(p.work.vector_ops[static_cast<int>(ops::VectorClass::kMultiply)], 4 * 256);
  EXPECT_EQ(p.work.vector_ops[static_cast<int>(ops::VectorClass::kAlu)], 2 * 256);
  EXPECT_EQ(p.work.flops, 6 * 256);
  Priced r = PriceFirstOp(Program1("stablehlo.multiply", 2, "tensor<256xf32>"), "v5e");
  EXPECT_EQ(r.work.vector_ops[static_cast<int>(ops::VectorClass::kMultiply)], 256);
  EXPECT_EQ(r.work.flops, 256);
}

// A bitcast between types of one width changes no byte; between widths the
// tiles change shape, so the data is rewritten.
TEST(RooflineTest, SameWidthBitcastIsFree) {
  Priced same = PriceFirstOp(
      Program1("stablehlo.bitcast_convert", 1, "tensor<64x128xf32>", "tensor<64x128xi32>"),
      "v5e");
  EXPECT_TRUE(same.work.free);
  EXPECT_EQ(same.cost.bound, hw::Bound::kFree);
  EXPECT_EQ(same.cost.seconds, 0);
  Priced narrow = PriceFirstOp(
      Program1("stablehlo.bitcast_convert", 1, "tensor<64x128xf32>", "tensor<64x128x4xi8>"),
      "v5e");
  EXPECT_FALSE(narrow.work.free);
  EXPECT_EQ(narrow.cost.bytes_read, 64 * 128 * 4);
  EXPECT_EQ(narrow.cost.bytes_written, 64 * 128 * 4);
}

// Integer power squares and multiplies once per exponent bit, so a wider
// type costs proportionally more vector work.
TEST(RooflineTest, IntegerPowerScalesWithWidth) {
  Priced p32 = PriceFirstOp(Program1("stablehlo.power", 2, "tensor<1024xi32>"), "v5e");
  Priced p8 = PriceFirstOp(Program1("stablehlo.power", 2, "tensor<1024xi8>"), "v5e");
  const int mul = static_cast<int>(ops::VectorClass::kMultiply);
  EXPECT_EQ(p32.work.vector_ops[mul], 2 * 32 * 1024);
  EXPECT_EQ(p8.work.vector_ops[mul], 2 * 8 * 1024);
  EXPECT_EQ(p32.work.flops, 0);  // integer ops are not FLOPs
}

}  // namespace
}  // namespace tpusim::timing

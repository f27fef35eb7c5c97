// Partitioning never changes results: every conformance function without
// collectives, its inputs given random shardings (even or padded) on 1, 2,
// 4 and 8 devices, gives the single-device run's outcome once partitioned
// and run on every device. The same bits where no reduction was split across devices;
// otherwise floating-point results may differ by reassociation, and the
// programs' own checks still hold.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <random>

#include "spmd/annotations.h"
#include "spmd/mesh.h"
#include "spmd/run_test_util.h"
#include "testing/test_util.h"
#include "tpusim/frontend/stablehlo/parser.h"
#include "tpusim/ir/rewrite.h"
#include "tpusim/spmd/partitioner.h"
#include "tpusim/verify/verifier.h"

namespace tpusim::spmd {
namespace {

namespace fs = std::filesystem;

using test::Outcome;
using test::RunPartitioned;
using test::RunWhole;
using test::SameValues;

// A random sharding of `shape`: each mesh axis, in random order, splits a
// random dimension, or none. Dimensions the axes do not divide (padded
// shards) are picked as often as those they divide.
Sharding RandomSharding(const Mesh& mesh, const ir::Shape& shape, std::mt19937& rng) {
  Sharding s = Sharding::Replicated(static_cast<int64_t>(shape.size()));
  std::vector<int> axes(mesh.num_axes());
  for (int a = 0; a < mesh.num_axes(); ++a) axes[a] = a;
  std::shuffle(axes.begin(), axes.end(), rng);
  for (int a : axes) {
    std::vector<size_t> fits;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] > 1) fits.push_back(d);
    }
    const size_t pick = rng() % (fits.size() + 1);  // fits.size(): leave the axis out
    if (pick < fits.size()) s.dims[fits[pick]].push_back(a);
  }
  return s;
}

// Per-device ops, and ops that talk to the host, which every device would
// repeat.
bool RunsPerDevice(const ir::Module& module) {
  bool found = false;
  for (const auto& f : module.functions()) {
    ir::Walk(f->body(), [&](ir::Operation& op) {
      const std::string& n = op.name_str();
      found |= WorksPerDevice(op) || n == "stablehlo.infeed" || n == "stablehlo.outfeed" ||
               n.starts_with("interpreter.");
    });
  }
  return found;
}

// `module` for `devices` partitions, each input of `function` (the results
// of its calls and constants) annotated with a random sharding; `uneven`
// is set if any of them pads its tiles.
std::unique_ptr<ir::Module> WithRandomShardings(const ir::Module& module,
                                                const std::string& function, int64_t devices,
                                                std::mt19937& rng, bool& uneven) {
  std::unique_ptr<ir::Module> out = ir::CloneModule(module);
  out->attrs().Set("mhlo.num_partitions", ir::Attribute::Int(devices, ir::ElementType::kSI32));
  const Mesh mesh(devices);
  ir::Function& f = *out->Lookup(function);
  std::vector<ir::Operation*> inputs;
  for (const auto& op : f.entry().ops()) {
    if (op->name_str() == "func.call" || op->name_str() == "stablehlo.constant") {
      inputs.push_back(op.get());
    }
  }
  for (ir::Operation* op : inputs) {
    ir::Operation* next = nullptr;
    const auto& ops = f.entry().ops();
    for (size_t i = 0; i + 1 < ops.size(); ++i) {
      if (ops[i].get() == op) next = ops[i + 1].get();
    }
    for (ir::Value v : op->results()) {
      if (!v.type().is_tensor() || v.type().num_elements() == 0) continue;
      Sharding s = RandomSharding(mesh, v.type().shape(), rng);
      uneven |= !SplitsEvenly(mesh, v.type(), s);
      auto mark = std::make_unique<ir::Operation>(ir::OpName("stablehlo.custom_call"), op->loc());
      mark->attrs().Set("call_target_name", ir::Attribute::String("Sharding"));
      mark->attrs().Set("mhlo.sharding", ir::Attribute::String(ToHlo(mesh, s).ToString()));
      ir::Value marked = mark->AddResult(v.type());
      ir::Operation* placed = f.entry().InsertBefore(next, std::move(mark));
      ir::ReplaceUses(f.body(), {{v.impl(), marked}});
      placed->SetOperands({v});
    }
  }
  f.Renumber();
  return out;
}

bool SplitsReductions(const PartitionStats& stats) {
  return stats.inserted.count("stablehlo.all_reduce") ||
         stats.inserted.count("stablehlo.reduce_scatter");
}

// Why the outcomes differ; empty if they agree. `exact`: no reduction was
// split, so the values agree but for the order of a sum (SameValues).
std::string Difference(const Outcome& whole, const Outcome& split, bool exact) {
  if (whole.status.code() != split.status.code()) {
    // A split reduction may move a float result across a check's tolerance.
    if (!exact && whole.status.ok() && split.status.code() == StatusCode::kFailedPrecondition) {
      return "";
    }
    return "whole: " + (whole.status.ok() ? "ok" : whole.status.ToString()) +
           "; partitioned: " + (split.status.ok() ? "ok" : split.status.ToString());
  }
  if (!exact || !whole.status.ok()) return "";
  if (whole.values.size() != split.values.size()) return "a different number of results";
  for (size_t i = 0; i < whole.values.size(); ++i) {
    if (!SameValues(whole.values[i], split.values[i])) {
      return "result " + std::to_string(i) + " was " + whole.values[i].ToString() + ", is " +
             split.values[i].ToString();
    }
  }
  return "";
}

TEST(PartitionerConformance, RandomShardingsKeepResults) {
  std::vector<fs::path> files = test::ConformanceFiles();
  if (files.empty()) GTEST_SKIP() << "no conformance programs";
  int checked = 0, split = 0, padded = 0;
  std::map<std::string, int> inserted;
  for (const fs::path& file : files) {
    const std::string name = file.filename().string();
    for (frontend::ParsedCase& c : frontend::ParseStableHloCases(test::ReadFile(file), name)) {
      if (!c.module.ok() || !verify::VerifyModule(**c.module).ok() || RunsPerDevice(**c.module)) {
        continue;
      }
      for (const auto& fn : (*c.module)->functions()) {
        if (!fn->is_public() || !fn->type().inputs.empty()) continue;
        const Outcome whole = RunWhole(**c.module, fn->name());
        std::mt19937 rng(static_cast<uint32_t>(std::hash<std::string>()(name + fn->name())));
        for (int64_t devices : {1, 2, 4, 8}) {
          bool uneven = false;
          auto sharded = WithRandomShardings(**c.module, fn->name(), devices, rng, uneven);
          padded += uneven;
          PartitionStats stats;
          auto partitioned = Partition(*sharded, fn->name(), &stats);
          const std::string where = name + ":" + std::to_string(fn->loc().line) + " @" +
                                    fn->name() + " on " + std::to_string(devices) + " devices";
          if (!partitioned.ok()) {
            ADD_FAILURE() << where << ": " << partitioned.status().ToString();
            continue;
          }
          for (const auto& [op, n] : stats.inserted) inserted[op] += n;
          const bool exact = !SplitsReductions(stats);
          split += !exact;
          std::string difference =
              Difference(whole, RunPartitioned(**partitioned, fn->name()), exact);
          EXPECT_EQ(difference, "") << where;
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 3000);
  EXPECT_GT(padded, 1000);
  // The random shardings exercise every way of moving data.
  for (const char* op : {"stablehlo.all_gather", "stablehlo.all_to_all", "stablehlo.all_reduce",
                         "stablehlo.dynamic_slice"}) {
    EXPECT_GT(inserted[op], 10) << op;
  }
  std::printf(
      "%d partitioned runs checked, %d with padded shards, %d with reductions split across "
      "devices\n",
      checked, padded, split);
}

}  // namespace
}  // namespace tpusim::spmd

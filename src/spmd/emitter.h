// Builds the ops a partitioned program adds: collectives over mesh axes and
// each device's slice of a value. Internal to src/spmd.
#ifndef TPUSIM_SPMD_EMITTER_H_
#define TPUSIM_SPMD_EMITTER_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spmd/mesh.h"
#include "tpusim/ir/ir.h"
#include "tpusim/spmd/partitioner.h"

namespace tpusim::spmd {

// `flat` as a dense i64 [rows, cols] attribute (replica groups, pairs,
// padding rows). REQUIRES: cols > 0 divides flat.size().
ir::Attribute I64Matrix(const std::vector<int64_t>& flat, int64_t cols);

class Emitter {
 public:
  // Appends to `block`; counts what it inserts in `stats`.
  Emitter(const Mesh& mesh, ir::Block* block, PartitionStats* stats) : mesh_(mesh), stats_(stats) {
    Enter(block);
  }

  // Emits into `block`, nested in the current one (a region's), until
  // Leave. Values made there are not reused outside it.
  void Enter(ir::Block* block) { scopes_.push_back({block, {}, {}}); }
  void Leave() { scopes_.pop_back(); }

  // Location of the ops emitted from now on: the op they serve.
  void set_location(ir::Location loc) { loc_ = std::move(loc); }

  ir::Operation* Emit(std::string_view name, std::vector<ir::Value> operands,
                      std::vector<ir::Type> results, std::vector<ir::NamedAttribute> attrs = {});
  // Appends `op` (a clone) at the end of the block.
  ir::Operation* Append(std::unique_ptr<ir::Operation> op) {
    return scopes_.back().block->Append(std::move(op));
  }

  // `v`'s tiles along `dim`, concatenated over the devices of `axes`.
  ir::Value AllGather(ir::Value v, int64_t dim, const Axes& axes);
  // `v` combined elementwise by `combiner` ("stablehlo.add") over `axes`.
  ir::Value AllReduce(ir::Value v, const Axes& axes, const std::string& combiner);
  // `v` split along `split` among the devices of `axes`, each keeping the
  // parts sent to it concatenated along `concat`.
  ir::Value AllToAll(ir::Value v, int64_t split, int64_t concat, const Axes& axes);
  // As AllReduce, each device keeping its part along `dim`.
  ir::Value ReduceScatter(ir::Value v, int64_t dim, const Axes& axes, const std::string& combiner);
  // Each device's part of `v` when dimension d is further split over
  // `axes[d]`: a local dynamic slice, no communication.
  ir::Value Slice(ir::Value v, const std::vector<Axes>& axes);
  // `v`, split along `dim` over `axes` from an array of `size` rows, with
  // the rows of its padding set to `fill` (a scalar), or zero without one.
  ir::Value Mask(ir::Value v, int64_t dim, const Axes& axes, int64_t size,
                 std::optional<ir::Value> fill);
  // `v` with zeros after its rows along `dim` up to `size`.
  ir::Value PadTo(ir::Value v, int64_t dim, int64_t size);
  // Rows [begin, end) of `v` along `dim`.
  ir::Value Rows(ir::Value v, int64_t dim, int64_t begin, int64_t end);
  // `v`, split along `dim` over `axes`, with `lo` rows of the previous
  // device's part before it and `hi` of the next one's after it (collective
  // permutes); negative counts drop rows instead. Devices at the ends get
  // `edge` (a scalar) where they have no neighbour, or zeros without one.
  // REQUIRES: |lo|, |hi| <= v's size along `dim`.
  ir::Value Halo(ir::Value v, int64_t dim, const Axes& axes, int64_t lo, int64_t hi,
                 std::optional<ir::Value> edge);

 private:
  // A scalar i32 holding values[device] on each device.
  ir::Value PerDevice(const std::vector<int64_t>& values);
  ir::Value PartitionId();
  ir::Value Zero(ir::ElementType element);
  // The part `local` of a broadcast's or an iota's result that `axes` slice.
  ir::Value SliceOfBroadcast(const ir::Operation& broadcast, const ir::Type& local,
                             const std::vector<Axes>& axes);
  ir::Value SliceOfIota(const ir::Operation& iota, const ir::Type& local,
                        const std::vector<Axes>& axes);
  ir::Value Broadcast(ir::Value scalar, const ir::Type& type);
  // `v` sent from each device to the one `step` after it along `axes`.
  ir::Value Shift(ir::Value v, const Axes& axes, int64_t step);
  // `v` where a device's position along `axes` is not `index`, else `edge`.
  ir::Value Edge(ir::Value v, const Axes& axes, int64_t index, ir::Value edge);
  ir::Value Constant(ir::Type type, std::vector<uint8_t> bytes);
  std::vector<ir::NamedAttribute> GroupAttrs(const Axes& axes);
  ir::Attribute NextChannel();
  void AddCombiner(ir::Operation* op, ir::ElementType element, const std::string& combiner);

  // A block being emitted into, with the per-device values made there.
  struct Scope {
    ir::Block* block;
    ir::Value partition_id;
    std::map<std::vector<int64_t>, ir::Value> per_device;
  };

  const Mesh& mesh_;
  PartitionStats* stats_;
  ir::Location loc_;
  int64_t next_channel_ = 1;
  std::vector<Scope> scopes_;
};

}  // namespace tpusim::spmd

#endif  // TPUSIM_SPMD_EMITTER_H_

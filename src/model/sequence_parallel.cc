// Sequence (context) parallelism in the emitted steps, as MaxText's
// all-gather context parallelism: activations split along the sequence
// over the "sequence" axis, each device keeping its query rows and
// gathering the keys and values (flash attention's rule takes the rows'
// positions for the causal mask). The train step's shardings name the axis
// (step_builder.h, train_step.cc); this file holds what only it needs.
#include "model/step_builder.h"

namespace tpusim::model {

// Each device's query rows add to every key's gradient: the partial sums
// leave in one reduce-scatter into the rows the device keeps, where the
// partitioner would otherwise all-reduce them whole (it has no wish for
// them inside a loop's body). Without a sequence axis nothing is partial.
Val StepBuilder::SplitKvGrad(const Val& x, bool heads_first) {
  if (o_.MeshSize("sequence") <= 1) return x;
  const int64_t heads_dim = heads_first ? 1 : 2, t_dim = heads_first ? 2 : 1;
  std::vector<std::vector<std::string>> axes(4);
  axes[0] = BatchAxes();
  axes[t_dim] = {"sequence"};
  // Heads split over tensor where they do in the attention that made x.
  if (x.shape[heads_dim] % o_.MeshSize("tensor") == 0) axes[heads_dim] = {"tensor"};
  return w_.Constraint(x, Sharding(axes));
}

Status CheckSequenceSplit(const TrainStepOptions& options, int64_t seq) {
  const int64_t parts = options.MeshSize("sequence");
  if (parts > 0 && seq % parts != 0) {
    return InvalidArgument("a sequence of " + std::to_string(seq) +
                           " tokens does not split over sequence = " + std::to_string(parts));
  }
  return Status::Ok();
}

}  // namespace tpusim::model

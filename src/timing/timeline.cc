#include "tpusim/timing/timeline.h"

namespace tpusim::timing {

void Timeline::Append(const ir::Operation& op, const hw::OpCost& cost, bool priced,
                      int64_t count, bool pipelined) {
  OpEvent e;
  e.op = &op;
  e.cost = cost;
  e.count = count;
  e.priced = priced;
  double operands_ready = 0;
  for (const ir::Value& v : op.operands()) {
    auto it = ready_s_.find(v.impl());
    if (it != ready_s_.end()) operands_ready = std::max(operands_ready, it->second);
  }
  double end;
  // `count` executions stand for a loop's iterations, each op's back to
  // back; laying a collective's block beside the compute blocks that follow
  // it gives the time that overlapping it in every iteration would.
  // A transfer to or from host memory runs the same way on the host
  // link's lane, as XLA's async host copies do.
  double* lane = !overlap_                        ? nullptr
                 : cost.bound == hw::Bound::kIci  ? &ici_end_s_
                 : cost.bound == hw::Bound::kHost ? &host_end_s_
                                                  : nullptr;
  if (lane != nullptr) {
    e.start_s = std::max(operands_ready, *lane);
    *lane = e.start_s + e.seconds();
    end = pipelined ? e.start_s + e.seconds() / static_cast<double>(count) : *lane;
  } else {
    e.start_s = std::max(compute_end_s_, operands_ready);
    waited_s_ += e.start_s - compute_end_s_;
    // A transfer the device waits through exposes all of its time.
    if (cost.bound == hw::Bound::kIci || cost.bound == hw::Bound::kHost) waited_s_ += e.seconds();
    end = compute_end_s_ = e.start_s + e.seconds();
    if (!overlap_) ici_end_s_ = host_end_s_ = compute_end_s_;
  }
  for (int i = 0; i < op.num_results(); ++i) ready_s_[op.result(i).impl()] = end;
  events_.push_back(e);
}

DeviceTotals Timeline::Totals() const {
  DeviceTotals t{.seconds = total_seconds(),
                 .exposed_communication_seconds = exposed_communication_seconds()};
  for (const OpEvent& e : events_) t.flops += e.cost.flops * e.count;
  return t;
}

std::vector<Span> Timeline::Spans() const {
  std::vector<Span> spans;
  spans.reserve(events_.size());
  for (const OpEvent& e : events_) {
    spans.push_back({.name = e.op->name_str() + (e.count > 1 ? " x" + std::to_string(e.count) : ""),
                     .start_s = e.start_s,
                     .seconds = e.seconds(),
                     .communication = slice_ && e.cost.bound == hw::Bound::kIci,
                     .host_transfer = e.cost.bound == hw::Bound::kHost});
  }
  return spans;
}

}  // namespace tpusim::timing

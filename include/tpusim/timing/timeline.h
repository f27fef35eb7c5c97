// A timeline: every op a device executed, in order, with its price on the
// chip. Built by the timing engine (timing.h), read by the reports.
#ifndef TPUSIM_TIMING_TIMELINE_H_
#define TPUSIM_TIMING_TIMELINE_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tpusim/hw/chip.h"
#include "tpusim/hw/cost_model.h"
#include "tpusim/ir/ir.h"
#include "tpusim/pod/slice.h"

namespace tpusim::timing {

struct OpEvent {
  const ir::Operation* op = nullptr;  // in the module timed; not owned
  double start_s = 0;
  hw::OpCost cost;     // of one execution
  int64_t count = 1;   // back-to-back executions this event stands for
  bool priced = true;  // false: the model has no work rule for this op
  double seconds() const { return cost.seconds * static_cast<double>(count); }
};

// An op's execution as a device's trace track draws it.
struct Span {
  std::string name;  // the op's, with " xN" for a block of N executions
  double start_s = 0, seconds = 0;
  bool communication = false;  // a collective on a slice: its own track
  bool host_transfer = false;  // a move to or from host memory: its own track
};

// What one device of a slice did in a run: the report's per-device table.
struct DeviceTotals {
  double seconds = 0;
  double exposed_communication_seconds = 0;  // the rest is compute
  int64_t flops = 0;
};

class Timeline {
 public:
  // `overlap`: collectives run beside compute (see Append). `slice`: the
  // slice the device belongs to, for the report's slice section (null: a
  // lone chip).
  explicit Timeline(hw::ChipSpec chip, bool overlap = false, const pod::Slice* slice = nullptr)
      : chip_(std::move(chip)), overlap_(overlap) {
    if (slice != nullptr) slice_ = *slice;
  }

  const std::optional<pod::Slice>& slice() const { return slice_; }

  // Appends an event of `count` executions. It starts when the previous
  // compute op ends (one device computes one op at a time) and its operands
  // are ready. With overlap, a collective (an op bound by the ICI) runs
  // beside the compute ops, as XLA's async collectives do under its
  // latency-hiding scheduler: from when its operands are ready and the
  // previous collective is done, until its result is first needed. A move
  // to or from host memory (an op bound by the host link) runs the same
  // way on a lane of its own.
  // `pipelined`: the `count` executions are a loop's, each of which XLA's
  // collective pipeliner starts one iteration early (its operands do not
  // depend on the iteration before), so a user waits for the first alone.
  void Append(const ir::Operation& op, const hw::OpCost& cost, bool priced,
              int64_t count = 1, bool pipelined = false);

  const hw::ChipSpec& chip() const { return chip_; }
  const std::vector<OpEvent>& events() const { return events_; }
  double total_seconds() const { return std::max({compute_end_s_, ici_end_s_, host_end_s_}); }
  // Time the device spent on communication that no compute hid: collectives
  // and host transfers run in line, compute waiting for their results, and
  // those still running after the last compute op.
  double exposed_communication_seconds() const {
    return waited_s_ + std::max(0.0, std::max(ici_end_s_, host_end_s_) - compute_end_s_);
  }

  // This timeline's totals.
  DeviceTotals Totals() const;
  // Every device of the run, in device order (this timeline is device 0's):
  // set by the runtime for the report; empty off a slice.
  void set_devices(std::vector<DeviceTotals> devices) { devices_ = std::move(devices); }
  const std::vector<DeviceTotals>& devices() const { return devices_; }

  // This timeline's ops as trace spans, in order.
  std::vector<Span> Spans() const;
  // Every device's spans, in device order, for the trace's track per device:
  // set by the runtime when the devices ran apart; empty when one timeline
  // stands for every device.
  void set_device_spans(std::vector<std::vector<Span>> spans) { device_spans_ = std::move(spans); }
  const std::vector<std::vector<Span>>& device_spans() const { return device_spans_; }

  // Notes the report repeats (e.g. "while at f:3:5: 10 iterations inferred").
  void AddNote(std::string note) { notes_.push_back(std::move(note)); }
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  hw::ChipSpec chip_;
  std::vector<OpEvent> events_;
  std::vector<std::string> notes_;
  std::vector<DeviceTotals> devices_;
  std::vector<std::vector<Span>> device_spans_;
  bool overlap_ = false;
  std::optional<pod::Slice> slice_;
  double compute_end_s_ = 0, ici_end_s_ = 0, host_end_s_ = 0, waited_s_ = 0;
  std::unordered_map<const ir::ValueImpl*, double> ready_s_;  // when each result is ready
};

}  // namespace tpusim::timing

#endif  // TPUSIM_TIMING_TIMELINE_H_

// A timeline: every op a device executed, in order, with its price on the
// chip. Built by the timing engine (timing.h), read by the reports.
#ifndef TPUSIM_TIMING_TIMELINE_H_
#define TPUSIM_TIMING_TIMELINE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tpusim/hw/chip.h"
#include "tpusim/hw/cost_model.h"
#include "tpusim/ir/ir.h"

namespace tpusim::timing {

struct OpEvent {
  const ir::Operation* op = nullptr;  // in the module timed; not owned
  double start_s = 0;
  hw::OpCost cost;     // of one execution
  int64_t count = 1;   // back-to-back executions this event stands for
  bool priced = true;  // false: the model has no work rule for this op
  double seconds() const { return cost.seconds * static_cast<double>(count); }
};

class Timeline {
 public:
  explicit Timeline(hw::ChipSpec chip) : chip_(std::move(chip)) {}

  // Appends an event of `count` executions that starts when the previous
  // event ends (one device runs one op at a time).
  void Append(const ir::Operation& op, const hw::OpCost& cost, bool priced,
              int64_t count = 1);

  const hw::ChipSpec& chip() const { return chip_; }
  const std::vector<OpEvent>& events() const { return events_; }
  double total_seconds() const { return end_s_; }

  // Notes the report repeats (e.g. "while at f:3:5: 10 iterations inferred").
  void AddNote(std::string note) { notes_.push_back(std::move(note)); }
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  hw::ChipSpec chip_;
  std::vector<OpEvent> events_;
  std::vector<std::string> notes_;
  double end_s_ = 0;
};

}  // namespace tpusim::timing

#endif  // TPUSIM_TIMING_TIMELINE_H_

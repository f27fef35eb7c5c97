#include "tpusim/timing/timeline.h"

namespace tpusim::timing {

void Timeline::Append(const ir::Operation& op, const hw::OpCost& cost, bool priced,
                      int64_t count) {
  OpEvent e;
  e.op = &op;
  e.start_s = end_s_;
  e.cost = cost;
  e.count = count;
  e.priced = priced;
  end_s_ += e.seconds();
  events_.push_back(e);
}

}  // namespace tpusim::timing

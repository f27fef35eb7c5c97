#include "tpusim/ir/dynamic.h"

#include "tpusim/ir/ir.h"

namespace tpusim::ir {

bool HasDynamicTypes(const Operation& op) {
  for (Value v : op.operands()) {
    if (!IsStatic(v.type())) return true;
  }
  for (Value v : op.results()) {
    if (!IsStatic(v.type())) return true;
  }
  return false;
}

}  // namespace tpusim::ir

#include "frontend/hlo/opcodes.h"

#include <gtest/gtest.h>

#include <set>

#include "tpusim/ops/op_def.h"

namespace tpusim::frontend {
namespace {

// The table is the contract between the HLO parser and printer: each entry
// must name an op tpusim has, and map both ways one to one.
TEST(HloOpcodesTest, EveryEntryIsARegisteredOpAndUnique) {
  std::set<std::string_view> hlo, stablehlo;
  for (const HloOpcode& op : AllHloOpcodes()) {
    EXPECT_NE(ops::OpRegistry::Lookup(op.stablehlo), nullptr) << op.stablehlo;
    EXPECT_TRUE(hlo.insert(op.hlo).second) << op.hlo;
    EXPECT_TRUE(stablehlo.insert(op.stablehlo).second) << op.stablehlo;
    EXPECT_EQ(FindByHloName(op.hlo), &op);
    EXPECT_EQ(FindByStableHloName(op.stablehlo), &op);
  }
  EXPECT_EQ(FindByHloName("dot"), nullptr);  // has attributes: not a rename
}

}  // namespace
}  // namespace tpusim::frontend

// The XLA HLO opcodes whose StableHLO op differs only in its name: same
// operands, same results, no attributes. The HLO parser and the HLO printer
// both read this one table; ops with attributes are converted in their code.
#ifndef TPUSIM_FRONTEND_HLO_OPCODES_H_
#define TPUSIM_FRONTEND_HLO_OPCODES_H_

#include <span>
#include <string_view>

namespace tpusim::frontend {

struct HloOpcode {
  std::string_view hlo;        // "exponential"
  std::string_view stablehlo;  // "stablehlo.exponential"
};

// The entry for an HLO opcode, or null if it is not a renamed op.
const HloOpcode* FindByHloName(std::string_view hlo);
// The entry for a StableHLO op name, or null.
const HloOpcode* FindByStableHloName(std::string_view stablehlo);
// Every entry.
std::span<const HloOpcode> AllHloOpcodes();

}  // namespace tpusim::frontend

#endif  // TPUSIM_FRONTEND_HLO_OPCODES_H_

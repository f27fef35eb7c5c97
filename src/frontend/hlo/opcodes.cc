#include "frontend/hlo/opcodes.h"

#include <array>

namespace tpusim::frontend {
namespace {

constexpr std::array<HloOpcode, 53> kOpcodes = {{
    {"abs", "stablehlo.abs"},
    {"add", "stablehlo.add"},
    {"after-all", "stablehlo.after_all"},
    {"and", "stablehlo.and"},
    {"atan2", "stablehlo.atan2"},
    {"bitcast-convert", "stablehlo.bitcast_convert"},
    {"cbrt", "stablehlo.cbrt"},
    {"ceil", "stablehlo.ceil"},
    {"clamp", "stablehlo.clamp"},
    {"complex", "stablehlo.complex"},
    {"convert", "stablehlo.convert"},
    {"cosine", "stablehlo.cosine"},
    {"count-leading-zeros", "stablehlo.count_leading_zeros"},
    {"divide", "stablehlo.divide"},
    {"erf", "chlo.erf"},
    {"exponential", "stablehlo.exponential"},
    {"exponential-minus-one", "stablehlo.exponential_minus_one"},
    {"floor", "stablehlo.floor"},
    {"imag", "stablehlo.imag"},
    {"is-finite", "stablehlo.is_finite"},
    {"log", "stablehlo.log"},
    {"log-plus-one", "stablehlo.log_plus_one"},
    {"logistic", "stablehlo.logistic"},
    {"maximum", "stablehlo.maximum"},
    {"minimum", "stablehlo.minimum"},
    {"multiply", "stablehlo.multiply"},
    {"negate", "stablehlo.negate"},
    {"not", "stablehlo.not"},
    {"opt-barrier", "stablehlo.optimization_barrier"},
    {"or", "stablehlo.or"},
    {"partition-id", "stablehlo.partition_id"},
    {"popcnt", "stablehlo.popcnt"},
    {"power", "stablehlo.power"},
    {"real", "stablehlo.real"},
    {"remainder", "stablehlo.remainder"},
    {"replica-id", "stablehlo.replica_id"},
    {"reshape", "stablehlo.reshape"},
    {"round-nearest-afz", "stablehlo.round_nearest_afz"},
    {"round-nearest-even", "stablehlo.round_nearest_even"},
    {"rsqrt", "stablehlo.rsqrt"},
    {"select", "stablehlo.select"},
    {"shift-left", "stablehlo.shift_left"},
    {"shift-right-arithmetic", "stablehlo.shift_right_arithmetic"},
    {"shift-right-logical", "stablehlo.shift_right_logical"},
    {"sign", "stablehlo.sign"},
    {"sine", "stablehlo.sine"},
    {"sqrt", "stablehlo.sqrt"},
    {"subtract", "stablehlo.subtract"},
    {"tan", "stablehlo.tan"},
    {"tanh", "stablehlo.tanh"},
    {"xor", "stablehlo.xor"},
    {"tuple", "stablehlo.tuple"},
    {"copy", "tpusim.copy"},
}};

}  // namespace

const HloOpcode* FindByHloName(std::string_view hlo) {
  for (const HloOpcode& op : kOpcodes) {
    if (op.hlo == hlo) return &op;
  }
  return nullptr;
}

const HloOpcode* FindByStableHloName(std::string_view stablehlo) {
  for (const HloOpcode& op : kOpcodes) {
    if (op.stablehlo == stablehlo) return &op;
  }
  return nullptr;
}

std::span<const HloOpcode> AllHloOpcodes() { return kOpcodes; }

}  // namespace tpusim::frontend

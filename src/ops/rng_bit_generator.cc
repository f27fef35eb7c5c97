// stablehlo.rng_bit_generator: counter-based random bits.
//
// The spec lets each implementation choose its variant. THREE_FRY (and
// DEFAULT) is Threefry-2x32 with 20 rounds keyed by state[0], one 64-bit word
// per counter value state[1], state[1] + 1, ...; this reproduces the spec's
// example bit for bit. PHILOX is Philox-4x32 with 10 rounds keyed by
// state[0] over the 128-bit counter (state[1], state[2] or 0), two words per
// counter value. The output's bytes are the words' little-endian bytes; the
// new state advances the counter past the values used.
#include <array>

#include "ops/kernels/threefry.h"
#include "ops/util/index_util.h"
#include "ops/util/op_util.h"
#include "ops/util/work_util.h"

namespace tpusim::ops {
namespace {

// One 64-bit word per counter value: the key and counter split into 32-bit
// halves, low first.
uint64_t ThreefryWord(uint64_t key, uint64_t counter) {
  const std::array<uint32_t, 2> x =
      Threefry2x32({static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32)},
                   {static_cast<uint32_t>(counter), static_cast<uint32_t>(counter >> 32)});
  return x[0] | (uint64_t{x[1]} << 32);
}

// Philox-4x32, 10 rounds: two 64-bit words per 128-bit counter value.
std::array<uint64_t, 2> Philox4x32(uint64_t key, uint64_t counter_lo, uint64_t counter_hi) {
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  uint32_t c[4] = {static_cast<uint32_t>(counter_lo), static_cast<uint32_t>(counter_lo >> 32),
                   static_cast<uint32_t>(counter_hi), static_cast<uint32_t>(counter_hi >> 32)};
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t{0xD2511F53u} * c[0];
    const uint64_t p1 = uint64_t{0xCD9E8D57u} * c[2];
    const uint32_t next[4] = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k0,
                              static_cast<uint32_t>(p1),
                              static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k1,
                              static_cast<uint32_t>(p0)};
    std::copy(next, next + 4, c);
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return {c[0] | (uint64_t{c[1]} << 32), c[2] | (uint64_t{c[3]} << 32)};
}

Status VerifyRngBitGenerator(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 2));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  const ir::Type& state = op.operand(0).type();
  if (state.rank() != 1 || state.element() != ir::ElementType::kUI64) {
    return OpError(op, "initial state must be a 1-d ui64 tensor, got " + state.ToString());
  }
  TPUSIM_RETURN_IF_ERROR(ExpectResultType(op, 0, state));
  const std::string algorithm = GetEnumOr(op, "rng_algorithm", "DEFAULT");
  const int64_t size = state.dim(0);
  if ((algorithm == "DEFAULT" || algorithm == "THREE_FRY") && size != 2) {
    return OpError(op, algorithm + " needs a state of 2 words, got " + std::to_string(size));
  }
  if (algorithm == "PHILOX" && size != 2 && size != 3) {
    return OpError(op, "PHILOX needs a state of 2 or 3 words, got " + std::to_string(size));
  }
  if (algorithm != "DEFAULT" && algorithm != "THREE_FRY" && algorithm != "PHILOX") {
    return OpError(op, "unknown rng_algorithm " + algorithm);
  }
  const ir::ElementType e = op.result(1).type().element();
  if (!(ir::IsInteger(e) || ir::IsFloat(e)) || ir::BitWidth(e) != 8 * ir::StorageBytes(e)) {
    return Unimplemented("'stablehlo.rng_bit_generator' producing " +
                         std::string(ir::ElementTypeName(e)) +
                         " (only types that fill their storage bytes)");
  }
  return Status::Ok();
}

StatusOr<std::vector<Tensor>> EvalRngBitGenerator(EvalContext&, const ir::Operation& op,
                                                  std::span<const Tensor> in) {
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> r, AllocateResults(op));
  const uint64_t* state = in[0].data<uint64_t>();
  const int64_t size = in[0].num_elements();
  Tensor& out = r[1];
  const int64_t words = (out.size_bytes() + 7) / 8;
  std::vector<uint64_t> bits(words);
  uint64_t* new_state = r[0].mutable_data<uint64_t>();
  std::copy(state, state + size, new_state);
  if (GetEnumOr(op, "rng_algorithm", "DEFAULT") == "PHILOX") {
    const uint64_t hi = size == 3 ? state[2] : 0;
    const int64_t blocks = (words + 1) / 2;
    for (int64_t b = 0; b < blocks; ++b) {
      // The 128-bit counter (state[1], hi) plus b, with the carry.
      const uint64_t lo = state[1] + static_cast<uint64_t>(b);
      const std::array<uint64_t, 2> pair = Philox4x32(state[0], lo, hi + (lo < state[1]));
      for (int64_t k = 0; k < 2 && 2 * b + k < words; ++k) bits[2 * b + k] = pair[k];
    }
    new_state[1] = state[1] + static_cast<uint64_t>(blocks);
    if (size == 3) new_state[2] = hi + (new_state[1] < state[1]);
  } else {
    for (int64_t i = 0; i < words; ++i) {
      bits[i] = ThreefryWord(state[0], state[1] + static_cast<uint64_t>(i));
    }
    new_state[1] = state[1] + static_cast<uint64_t>(words);
  }
  if (out.size_bytes() > 0) std::memcpy(out.mutable_raw(), bits.data(), out.size_bytes());
  return r;
}

// Vector ops per 32-bit output word. Threefry-2x32: kThreefryOpsPerBlock
// per 2 words. Philox-4x32: 10 rounds of 2 widening multiplies (hi and lo
// halves), 4 xors and 2 key bumps, per 4 words.
Work RngBitGeneratorWork(const ir::Operation& op) {
  Work w = ReadsAndWrites(op);
  if (op.num_results() != 2) return w;
  const int64_t words = (LogicalBytes(op.result(1).type()) + 3) / 4;
  if (GetEnumOr(op, "rng_algorithm", "DEFAULT") == "PHILOX") {
    w.AddVector(VectorClass::kMultiply, words * 10);
    w.AddVector(VectorClass::kAlu, words * 15);
  } else {
    w.AddVector(VectorClass::kAlu, words * kThreefryOpsPerBlock / 2);
  }
  return w;
}

TPUSIM_REGISTER_OP({.name = "stablehlo.rng_bit_generator",
                    .verify = VerifyRngBitGenerator,
                    .eval = EvalRngBitGenerator,
                    .work = RngBitGeneratorWork});

}  // namespace
}  // namespace tpusim::ops

#include "ops/custom_calls/foreign_kernels.h"

#include <charconv>
#include <string>

#include "ops/util/work_util.h"

namespace tpusim::ops {
namespace {

// --- Transformer Engine's fused attention (te_fused_attn_{forward,backward}_ffi),
// which JAX programs built with TE call. Priced as flash attention: the
// scores never reach HBM, so the traffic is the operands and results, and
// the MXU does QK^T and PV (forward) or those again plus dV, dP, dQ, dK
// (backward) per head; a causal mask skips the blocks above the diagonal.

// An integer field `key = N` of the kernel's backend_config text.
std::optional<int64_t> ConfigInt(const ir::Operation& op, std::string_view key) {
  ir::Attribute config = op.attr("backend_config");
  if (config.kind() != ir::Attribute::Kind::kString) return std::nullopt;
  const std::string& text = config.str();
  const std::string pattern = std::string(key) + " = ";
  size_t at = text.find(pattern);
  if (at == std::string::npos) return std::nullopt;
  const char* begin = text.data() + at + pattern.size();
  int64_t v = 0;
  auto [end, ec] = std::from_chars(begin, text.data() + text.size(), v);
  if (ec != std::errc()) return std::nullopt;
  return v;
}

// Q is [B, S, H, D] or packed QKV [B, S, 3, H, D]; KV is [B, S, 2, Hkv, D]
// or K alone [B, S, Hkv, D] (TE's BSHD layouts, which JAX uses).
std::optional<AttentionShape> AttentionShapeOf(const ir::Operation& op) {
  if (op.num_operands() < 2) return std::nullopt;
  const ir::Type& q = op.operand(0).type();
  const ir::Type& kv = op.operand(1).type();
  if (!q.is_tensor() || !kv.is_tensor()) return std::nullopt;
  AttentionShape s;
  const ir::Shape& qs = q.shape();
  const ir::Shape& ks = kv.shape();
  if (qs.size() == 5 && qs[2] == 3) {
    s = {.batch = qs[0],
         .q_len = qs[1],
         .kv_len = qs[1],
         .heads = qs[3],
         .kv_heads = qs[3],
         .head_dim = qs[4],
         .element = q.element()};
  } else if (qs.size() == 4 && (ks.size() == 5 || ks.size() == 4)) {
    s = {.batch = qs[0], .q_len = qs[1], .heads = qs[2], .head_dim = qs[3], .element = q.element()};
    s.kv_len = ks[1];
    s.kv_heads = ks.size() == 5 ? ks[3] : ks[2];
  } else {
    return std::nullopt;
  }
  // NVTE_Mask_Type: 2-5 are the causal kinds.
  if (std::optional<int64_t> mask = ConfigInt(op, "mask_type"); mask && *mask >= 2 && *mask <= 5) {
    const double n = static_cast<double>(s.q_len);
    s.kept = s.q_len == s.kv_len && n > 0 ? (n + 1) / (2 * n) : 0.5;
    s.mask = "causal";
  } else if (!mask) {
    s.mask = "mask unknown, priced unmasked";
  }
  return s;
}

}  // namespace

Work AttentionWork(const ir::Operation& op, const AttentionShape& s, bool backward) {
  Work w = ReadsAndWrites(op);
  // The query heads that share a KV head go through the MXU together, their
  // rows stacked against that head's keys and values (as TPU attention
  // kernels for grouped and multi-query attention run them): one load of
  // each K and V tile serves the whole group, which is what makes a decode
  // step's single query row per head cheap.
  const int64_t group = s.kv_heads > 0 && s.heads % s.kv_heads == 0 ? s.heads / s.kv_heads : 1;
  const int64_t heads = s.batch * (s.heads / group);
  const int64_t rows = group * static_cast<int64_t>(static_cast<double>(s.q_len) * s.kept + 0.5);
  auto mm = [&](int64_t m, int64_t k, int64_t n) {
    w.matmuls.push_back(
        {.batch = heads, .m = m, .k = k, .n = n, .lhs = s.element, .rhs = s.element});
  };
  // Masked rows of the [Sq, Skv] scores shrink every product that spans them.
  mm(rows, s.head_dim, s.kv_len);  // S = Q K^T
  mm(rows, s.kv_len, s.head_dim);  // O = P V
  if (backward) {
    mm(s.kv_len, rows, s.head_dim);  // dV = P^T dO
    mm(rows, s.head_dim, s.kv_len);  // dP = dO V^T
    mm(rows, s.kv_len, s.head_dim);  // dQ = dS K
    mm(s.kv_len, rows, s.head_dim);  // dK = dS^T Q
  }
  for (const MatmulWork& m : w.matmuls) w.flops += m.flops();
  const int64_t scores = heads * rows * s.kv_len;     // every query head's
  w.AddVector(VectorClass::kTranscendental, scores);  // exp (recomputed backward)
  w.AddVector(VectorClass::kMultiply, backward ? 2 * scores : scores);
  w.AddVector(VectorClass::kAlu, backward ? scores : 3 * scores);  // max, subtract, sum
  w.priced_as = std::string("flash attention ") + (backward ? "backward" : "forward") + " (batch " +
                std::to_string(s.batch) + ", " + std::to_string(s.heads) + " heads, " +
                std::to_string(s.kv_heads) + " KV heads, " + std::to_string(s.q_len) + "x" +
                std::to_string(s.kv_len) + ", head dim " + std::to_string(s.head_dim) + ", " +
                s.mask + ") from its shapes";
  return w;
}

std::optional<Work> ForeignKernelWork(const ir::Operation& op, std::string_view target) {
  const bool forward = target == "te_fused_attn_forward_ffi" || target == "te_fused_attn_forward";
  const bool backward =
      target == "te_fused_attn_backward_ffi" || target == "te_fused_attn_backward";
  if (!forward && !backward) return std::nullopt;
  std::optional<AttentionShape> s = AttentionShapeOf(op);
  if (!s) return std::nullopt;
  return AttentionWork(op, *s, backward);
}

}  // namespace tpusim::ops

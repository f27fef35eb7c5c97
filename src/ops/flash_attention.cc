// tpusim.flash_attention and tpusim.flash_attention_grad: attention as a
// fused kernel (FlashAttention, or JAX's Pallas splash attention on TPU)
// that never writes the [S, T] scores to HBM. The model builder emits them;
// work is priced from shapes.
//
//   %o, %lse = "tpusim.flash_attention"(%q, %k, %v[, %pos]) {causal = true, scale = 0.125 : f64}
//   %dq, %dk, %dv = "tpusim.flash_attention_grad"(%q, %k, %v, %o, %lse, %do[, %pos]) {...}
//
// q, o, do, dq: [batch, S, heads, d]; k, v, dk, dv: [batch, T, kv_heads, d],
// each kv head serving heads / kv_heads query heads; lse: [batch, heads, S]
// f32, the log-sum-exp of each row of scores. pos (optional): i32 [S], the
// query rows' positions among the keys (0..S-1 without it), which the
// causal mask compares: with it a device holding some query rows of a
// sequence split over devices (context parallelism) masks them right.
//
// Values. f32, bf16 and f16 operands go to the blocked kernel of
// ops/kernels/attention.h, which computes as a flash kernel on a GPU or TPU
// does: f32 dots and softmax in the reference numerics, the MXU's bf16
// operands (dot_general's passes, from --precision) in the TPU numerics.
// Each query row's o, lse and dq are the same bits however the rows are
// split between devices and however many threads run. Other operand types
// (f64) are computed exactly here, in f64 with the plain loops below, so
// that an f64 step's gradients match finite differences.
#include <cmath>
#include <limits>
#include <vector>

#include "ops/custom_calls/foreign_kernels.h"
#include "ops/kernels/attention.h"
#include "ops/kernels/matmul.h"
#include "ops/util/index_util.h"
#include "ops/util/op_util.h"
#include "ops/util/work_util.h"
#include "tpusim/numerics/float_formats.h"
#include "tpusim/ops/op_def.h"

namespace tpusim::ops {
namespace {

struct Config {
  int64_t b, s, t, h, kv, d;
  bool causal;
  double scale;
  bool positions;                // a pos operand gives the rows' positions
  std::vector<int64_t> row_pos;  // at evaluation: each row's position
  int64_t Q(int64_t bi, int64_t i, int64_t hi, int64_t x) const {
    return ((bi * s + i) * h + hi) * d + x;
  }
  int64_t K(int64_t bi, int64_t j, int64_t g, int64_t x) const {
    return ((bi * t + j) * kv + g) * d + x;
  }
  int64_t L(int64_t bi, int64_t hi, int64_t i) const { return (bi * h + hi) * s + i; }
  bool Masked(int64_t i, int64_t j) const { return causal && j > row_pos[i]; }
};

bool IsGrad(const ir::Operation& op) { return op.name_str() == "tpusim.flash_attention_grad"; }

// The operand index of pos: after q, k, v (and o, lse, do for the grad).
int PositionsOperand(const ir::Operation& op) { return IsGrad(op) ? 6 : 3; }

StatusOr<Config> ReadConfig(const ir::Operation& op) {
  if (op.num_operands() < 3) return OpError(op, "needs q, k and v");
  const ir::Type& q = op.operand(0).type();
  const ir::Type& k = op.operand(1).type();
  if (!q.is_tensor() || !k.is_tensor() || q.rank() != 4 || k.rank() != 4 ||
      op.operand(2).type() != k) {
    return OpError(op, "takes q [b, s, heads, d] and k, v alike [b, t, kv_heads, d]");
  }
  const int pos = PositionsOperand(op);
  Config c{q.dim(0), q.dim(1), k.dim(1), q.dim(2), k.dim(2), q.dim(3), false, 1.0, false, {}};
  c.positions = op.num_operands() > pos;
  if (c.positions && op.operand(pos).type() != ir::Type::Tensor(ir::ElementType::kSI32, {c.s})) {
    return OpError(op, "takes pos i32 [" + std::to_string(c.s) + "], got " +
                           op.operand(pos).type().ToString());
  }
  if (k.dim(0) != c.b || k.dim(3) != c.d || c.kv == 0 || c.h % c.kv != 0) {
    return OpError(op,
                   "q " + q.ToString() + " and k " + k.ToString() +
                       " differ in batch or head size, or heads are not a multiple of kv heads");
  }
  ir::Attribute causal = op.attr("causal");
  c.causal = causal.kind() == ir::Attribute::Kind::kBool && causal.bool_value();
  if (c.causal && !c.positions && c.s != c.t) {
    return OpError(op, "causal attention needs s == t, or the rows' positions");
  }
  ir::Attribute scale = op.attr("scale");
  if (scale.kind() == ir::Attribute::Kind::kFloat) c.scale = scale.float_value();
  return c;
}

std::vector<double> Load(const Tensor& t) {
  std::vector<double> out(static_cast<size_t>(t.num_elements()));
  const int w = ir::StorageBytes(t.element());
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = numerics::LoadAsDouble(t.element(), t.raw() + static_cast<int64_t>(i) * w);
  }
  return out;
}

// The config of `op` with its rows' positions from the operands.
StatusOr<Config> EvalConfig(const ir::Operation& op, std::span<const Tensor> in) {
  TPUSIM_ASSIGN_OR_RETURN(Config c, ReadConfig(op));
  c.row_pos.resize(static_cast<size_t>(c.s));
  for (int64_t i = 0; i < c.s; ++i) {
    c.row_pos[i] = c.positions ? in[PositionsOperand(op)].data<int32_t>()[i] : i;
  }
  return c;
}

StatusOr<Tensor> Store(const std::vector<double>& v, const ir::Type& type) {
  TPUSIM_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(type));
  const int w = ir::StorageBytes(t.element());
  for (size_t i = 0; i < v.size(); ++i) {
    numerics::StoreDouble(t.element(), v[i], t.mutable_raw() + static_cast<int64_t>(i) * w);
  }
  return t;
}

Status VerifyTypes(const ir::Operation& op, const std::vector<ir::Type>& want) {
  if (op.num_results() != static_cast<int>(want.size())) {
    return OpError(op, "has " + std::to_string(op.num_results()) + " results, expected " +
                           std::to_string(want.size()));
  }
  for (int r = 0; r < op.num_results(); ++r) {
    if (op.result(r).type() != want[r]) {
      return OpError(op, "result " + std::to_string(r) + " has type " +
                             op.result(r).type().ToString() + ", expected " + want[r].ToString());
    }
  }
  return Status::Ok();
}

ir::Type LseType(const Config& c) {
  return ir::Type::Tensor(ir::ElementType::kF32, {c.b, c.h, c.s});
}

// n operands, or n and pos.
Status ExpectOperands(const ir::Operation& op, int n) {
  return op.num_operands() == n + 1 ? Status::Ok() : ExpectNumOperands(op, n);
}

Status VerifyForward(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectOperands(op, 3));
  TPUSIM_ASSIGN_OR_RETURN(Config c, ReadConfig(op));
  return VerifyTypes(op, {op.operand(0).type(), LseType(c)});
}

Status VerifyGrad(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectOperands(op, 6));
  TPUSIM_ASSIGN_OR_RETURN(Config c, ReadConfig(op));
  const ir::Type& q = op.operand(0).type();
  if (op.operand(3).type() != q || op.operand(5).type() != q ||
      op.operand(4).type() != LseType(c)) {
    return OpError(op, "takes o and do of q's type and lse " + LseType(c).ToString());
  }
  return VerifyTypes(op, {q, op.operand(1).type(), op.operand(1).type()});
}

// The scores of row i of head hi, scaled, and their softmax given the row's
// log-sum-exp (computed here when `lse` is NaN).
void Row(const Config& c, const std::vector<double>& q, const std::vector<double>& k, int64_t bi,
         int64_t hi, int64_t i, double& lse, std::vector<double>& p) {
  const int64_t g = hi / (c.h / c.kv);
  double max = -std::numeric_limits<double>::infinity();
  for (int64_t j = 0; j < c.t; ++j) {
    double dot = 0;
    for (int64_t x = 0; x < c.d; ++x) dot += q[c.Q(bi, i, hi, x)] * k[c.K(bi, j, g, x)];
    p[j] = c.Masked(i, j) ? -std::numeric_limits<double>::infinity() : c.scale * dot;
    max = std::max(max, p[j]);
  }
  if (std::isnan(lse)) {
    double sum = 0;
    for (int64_t j = 0; j < c.t; ++j) sum += std::exp(p[j] - max);
    lse = max + std::log(sum);
  }
  for (int64_t j = 0; j < c.t; ++j) p[j] = std::exp(p[j] - lse);
}

StatusOr<std::vector<Tensor>> ExactForward(const ir::Operation& op, const Config& c,
                                           std::span<const Tensor> in) {
  const std::vector<double> q = Load(in[0]), k = Load(in[1]), v = Load(in[2]);
  std::vector<double> o(q.size()), lse(static_cast<size_t>(c.b * c.h * c.s)), p(c.t);
  for (int64_t bi = 0; bi < c.b; ++bi) {
    for (int64_t hi = 0; hi < c.h; ++hi) {
      const int64_t g = hi / (c.h / c.kv);
      for (int64_t i = 0; i < c.s; ++i) {
        double l = std::numeric_limits<double>::quiet_NaN();
        Row(c, q, k, bi, hi, i, l, p);
        lse[c.L(bi, hi, i)] = l;
        for (int64_t x = 0; x < c.d; ++x) {
          double sum = 0;
          for (int64_t j = 0; j < c.t; ++j) sum += p[j] * v[c.K(bi, j, g, x)];
          o[c.Q(bi, i, hi, x)] = sum;
        }
      }
    }
  }
  TPUSIM_ASSIGN_OR_RETURN(Tensor out, Store(o, op.result(0).type()));
  TPUSIM_ASSIGN_OR_RETURN(Tensor sums, Store(lse, op.result(1).type()));
  return std::vector<Tensor>{std::move(out), std::move(sums)};
}

// dp = do v^T, ds = p (dp - rowsum(do o)), dq = scale ds k, dk = scale ds^T q,
// dv = p^T do; a kv head's gradients sum over the query heads it serves.
StatusOr<std::vector<Tensor>> ExactGrad(const ir::Operation& op, const Config& c,
                                        std::span<const Tensor> in) {
  const std::vector<double> q = Load(in[0]), k = Load(in[1]), v = Load(in[2]), o = Load(in[3]),
                            lse = Load(in[4]), dout = Load(in[5]);
  std::vector<double> dq(q.size()), dk(k.size()), dv(v.size()), p(c.t);
  for (int64_t bi = 0; bi < c.b; ++bi) {
    for (int64_t hi = 0; hi < c.h; ++hi) {
      const int64_t g = hi / (c.h / c.kv);
      for (int64_t i = 0; i < c.s; ++i) {
        double l = lse[c.L(bi, hi, i)];
        Row(c, q, k, bi, hi, i, l, p);
        double rowsum = 0;
        for (int64_t x = 0; x < c.d; ++x) rowsum += dout[c.Q(bi, i, hi, x)] * o[c.Q(bi, i, hi, x)];
        for (int64_t j = 0; j < c.t; ++j) {
          if (p[j] == 0) continue;
          double dp = 0;
          for (int64_t x = 0; x < c.d; ++x) dp += dout[c.Q(bi, i, hi, x)] * v[c.K(bi, j, g, x)];
          const double ds = p[j] * (dp - rowsum);
          for (int64_t x = 0; x < c.d; ++x) {
            dq[c.Q(bi, i, hi, x)] += c.scale * ds * k[c.K(bi, j, g, x)];
            dk[c.K(bi, j, g, x)] += c.scale * ds * q[c.Q(bi, i, hi, x)];
            dv[c.K(bi, j, g, x)] += p[j] * dout[c.Q(bi, i, hi, x)];
          }
        }
      }
    }
  }
  std::vector<Tensor> out;
  for (int r = 0; r < 3; ++r) {
    TPUSIM_ASSIGN_OR_RETURN(Tensor t, Store(r == 0 ? dq : r == 1 ? dk : dv, op.result(r).type()));
    out.push_back(std::move(t));
  }
  return out;
}

// True when the blocked kernel takes the first n operands: types it
// handles and no empty dimension.
bool KernelTakes(const Config& c, std::span<const Tensor> in, int n) {
  for (int i = 0; i < n; ++i) {
    if (!AttentionKernelTakes(in[i].element())) return false;
  }
  return c.b > 0 && c.s > 0 && c.t > 0 && c.h > 0 && c.d > 0;
}

StatusOr<AttentionNumerics> KernelNumerics(EvalContext& ctx, const ir::Operation& op) {
  TPUSIM_ASSIGN_OR_RETURN(MatmulNumerics m, SelectMatmulNumerics(ctx, op));
  return AttentionNumerics{.tpu = m.numerics == Numerics::kTpu, .precision = m.precision};
}

AttentionDims KernelDims(const Config& c) {
  return {.batch = c.b, .q_len = c.s, .kv_len = c.t, .heads = c.h, .kv_heads = c.kv,
          .head_dim = c.d, .causal = c.causal, .scale = c.scale, .row_pos = c.row_pos};
}

StatusOr<std::vector<Tensor>> EvalForward(EvalContext& ctx, const ir::Operation& op,
                                          std::span<const Tensor> in) {
  TPUSIM_ASSIGN_OR_RETURN(Config c, EvalConfig(op, in));
  if (!KernelTakes(c, in, 3)) return ExactForward(op, c, in);
  TPUSIM_ASSIGN_OR_RETURN(AttentionNumerics num, KernelNumerics(ctx, op));
  return AttentionForward(KernelDims(c), num, in[0], in[1], in[2],
                          op.result(0).type().element());
}

StatusOr<std::vector<Tensor>> EvalGrad(EvalContext& ctx, const ir::Operation& op,
                                       std::span<const Tensor> in) {
  TPUSIM_ASSIGN_OR_RETURN(Config c, EvalConfig(op, in));
  if (!KernelTakes(c, in, 6) || in[4].element() != ir::ElementType::kF32) {
    return ExactGrad(op, c, in);
  }
  TPUSIM_ASSIGN_OR_RETURN(AttentionNumerics num, KernelNumerics(ctx, op));
  return AttentionBackward(KernelDims(c), num, in[0], in[1], in[2], in[3], in[4], in[5]);
}

Work FlashWork(const ir::Operation& op, bool backward) {
  auto c = ReadConfig(op);
  if (!c.ok()) return ReadsAndWrites(op);
  AttentionShape s{.batch = c->b,
                   .q_len = c->s,
                   .kv_len = c->t,
                   .heads = c->h,
                   .kv_heads = c->kv,
                   .head_dim = c->d,
                   .element = op.operand(0).type().element()};
  if (c->causal) {
    // Rows at given positions, some of a sequence split over devices, keep
    // on average what the whole sequence keeps (so a device with the last
    // rows does more: MaxText's load-balanced split evens that out).
    const double n = static_cast<double>(c->positions ? c->t : c->s);
    s.kept = n > 0 ? (n + 1) / (2 * n) : 0.5;
    s.mask = "causal";
  }
  return AttentionWork(op, s, backward);
}

// Batch, kv heads (each device its query heads' kv heads) and query rows
// split; the keys stay whole (all-gathered: MaxText's all-gather context
// parallelism; a ring of kv blocks would avoid holding them all). A causal
// mask needs the rows' positions to split them. dk and dv sum over the
// query rows, so split rows leave them partial sums, added up across the
// devices.
std::optional<ShardingRule> FlashRule(const ir::Operation& op) {
  auto c = ReadConfig(op);
  if (!c.ok()) return std::nullopt;
  ShardingRule rule;
  const int batch = rule.Add(c->b);
  const int heads = rule.Add(c->kv);
  const int rows = rule.Add(c->s, !c->causal || c->positions);
  rule.factors[heads].splits_unevenly = false;
  rule.factors[rows].splits_unevenly = false;
  const std::vector<int> q = {batch, rows, heads, -1}, kv = {batch, -1, heads, -1},
                         lse = {batch, heads, rows}, pos = {rows};
  const bool grad = IsGrad(op);
  rule.operands = {q, kv, kv};
  if (grad) rule.operands.insert(rule.operands.end(), {q, lse, q});
  if (c->positions) rule.operands.push_back(pos);
  rule.results = grad ? std::vector<std::vector<int>>{q, kv, kv} : std::vector{q, lse};
  if (grad) {
    rule.summed = {{}, {rows}, {rows}};
    rule.combiner = "stablehlo.add";
  }
  return rule;
}

TPUSIM_REGISTER_OP({.name = "tpusim.flash_attention",
                    .verify = VerifyForward,
                    .eval = EvalForward,
                    .work = [](const ir::Operation& op) { return FlashWork(op, false); },
                    .sharding_rule = FlashRule});
TPUSIM_REGISTER_OP({.name = "tpusim.flash_attention_grad",
                    .verify = VerifyGrad,
                    .eval = EvalGrad,
                    .work = [](const ir::Operation& op) { return FlashWork(op, true); },
                    .sharding_rule = FlashRule});

}  // namespace
}  // namespace tpusim::ops

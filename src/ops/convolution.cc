// stablehlo.convolution and stablehlo.dynamic_conv, as im2col + the batched
// matmul of ops/kernels/matmul.h (so convolutions get the same f32/bf16 fast paths
// and TPU precision passes as dot_general): one matmul batch per feature or
// batch group, rows = output positions, columns = (window position, input
// feature), and the kernel rearranged to [group, window * Cin, Cout / groups].
#include <algorithm>
#include <cstring>

#include "ops/kernels/matmul.h"
#include "ops/util/index_util.h"
#include "ops/util/op_util.h"
#include "ops/util/shape_infer.h"
#include "ops/util/work_util.h"
#include "tpusim/numerics/float_formats.h"

namespace tpusim::ops {
namespace {

struct ConvConfig {
  int64_t in_batch = 0, in_feature = 0, k_in = 0, k_out = 0, out_batch = 0, out_feature = 0;
  std::vector<int64_t> in_spatial, k_spatial, out_spatial;
  std::vector<int64_t> strides, lhs_dilation, rhs_dilation, pad_lo, pad_hi, reverse;
  int64_t feature_groups = 1, batch_groups = 1;
  int64_t num_spatial() const { return static_cast<int64_t>(in_spatial.size()); }
};

Status Error(const ir::Operation& op, const std::string& what) {
  return InvalidArgument("'" + op.name_str() + "' " + what);
}

// A window attribute of one entry per spatial dimension, or `fallback`
// repeated when absent.
StatusOr<std::vector<int64_t>> WindowInts(const ir::Operation& op, std::string_view key,
                                          int64_t spatial, int64_t fallback) {
  std::vector<int64_t> v = GetIntsOr(op, key, std::vector<int64_t>(spatial, fallback));
  if (static_cast<int64_t>(v.size()) != spatial) {
    return Error(op, std::string(key) + " must have " + std::to_string(spatial) + " entries, got " +
                         FormatInts(v));
  }
  return v;
}

// Padding as [lo0, hi0, lo1, hi1, ...] split into lo and hi lists.
Status SetPadding(const ir::Operation& op, const std::vector<int64_t>& flat, ConvConfig& c) {
  if (static_cast<int64_t>(flat.size()) != 2 * c.num_spatial()) {
    return Error(op, "padding must have shape [" + std::to_string(c.num_spatial()) + ", 2]");
  }
  c.pad_lo.clear();
  c.pad_hi.clear();
  for (int64_t s = 0; s < c.num_spatial(); ++s) {
    c.pad_lo.push_back(flat[2 * s]);
    c.pad_hi.push_back(flat[2 * s + 1]);
  }
  return Status::Ok();
}

// Reads every attribute; padding only for stablehlo.convolution (a
// dynamic_conv's is an operand).
StatusOr<ConvConfig> GetConvConfig(const ir::Operation& op) {
  TPUSIM_ASSIGN_OR_RETURN(ir::Attribute dn,
                          GetAttr(op, "dimension_numbers", ir::Attribute::Kind::kStruct));
  auto get_int = [&](std::string_view key) {
    ir::Attribute f = dn.Get(key);
    return f && f.kind() == ir::Attribute::Kind::kInt ? f.int_value() : 0;
  };
  auto get_ints = [&](std::string_view key) {
    ir::Attribute f = dn.Get(key);
    return f ? f.AsInts() : std::vector<int64_t>{};
  };
  ConvConfig c;
  c.in_batch = get_int("input_batch_dimension");
  c.in_feature = get_int("input_feature_dimension");
  c.in_spatial = get_ints("input_spatial_dimensions");
  c.k_in = get_int("kernel_input_feature_dimension");
  c.k_out = get_int("kernel_output_feature_dimension");
  c.k_spatial = get_ints("kernel_spatial_dimensions");
  c.out_batch = get_int("output_batch_dimension");
  c.out_feature = get_int("output_feature_dimension");
  c.out_spatial = get_ints("output_spatial_dimensions");
  const int64_t s = c.num_spatial();
  TPUSIM_ASSIGN_OR_RETURN(c.strides, WindowInts(op, "window_strides", s, 1));
  TPUSIM_ASSIGN_OR_RETURN(c.lhs_dilation, WindowInts(op, "lhs_dilation", s, 1));
  TPUSIM_ASSIGN_OR_RETURN(c.rhs_dilation, WindowInts(op, "rhs_dilation", s, 1));
  TPUSIM_ASSIGN_OR_RETURN(c.reverse, WindowInts(op, "window_reversal", s, 0));
  if (op.name_str() == "stablehlo.convolution") {
    TPUSIM_RETURN_IF_ERROR(SetPadding(op, GetIntsOr(op, "padding", std::vector<int64_t>(2 * s, 0)), c));
  } else {
    c.pad_lo.assign(s, 0);
    c.pad_hi.assign(s, 0);
  }
  c.feature_groups = GetIntOr(op, "feature_group_count", 1);
  c.batch_groups = GetIntOr(op, "batch_group_count", 1);
  return c;
}

// `dims` are distinct and within [0, rank).
bool ValidDims(std::vector<int64_t> dims, int64_t rank) {
  for (int64_t d : dims) {
    if (d < 0 || d >= rank) return false;
  }
  std::sort(dims.begin(), dims.end());
  return std::adjacent_find(dims.begin(), dims.end()) == dims.end();
}

// Constraints C1-C23 (all but the result shape).
Status CheckConvConfig(const ir::Operation& op, const ConvConfig& c, const ir::Shape& lhs,
                       const ir::Shape& rhs) {
  const auto n = static_cast<int64_t>(lhs.size());
  if (static_cast<int64_t>(rhs.size()) != n) return Error(op, "needs lhs and rhs of equal rank");
  if (n < 2 || c.num_spatial() != n - 2 || static_cast<int64_t>(c.k_spatial.size()) != n - 2 ||
      static_cast<int64_t>(c.out_spatial.size()) != n - 2) {
    return Error(op, "needs rank - 2 spatial dimensions in every layout");
  }
  std::vector<int64_t> in = c.in_spatial, k = c.k_spatial, out = c.out_spatial;
  in.push_back(c.in_batch);
  in.push_back(c.in_feature);
  k.push_back(c.k_in);
  k.push_back(c.k_out);
  out.push_back(c.out_batch);
  out.push_back(c.out_feature);
  if (!ValidDims(in, n) || !ValidDims(k, n) || !ValidDims(out, n)) {
    return Error(op, "dimension numbers must be distinct dimensions within the rank");
  }
  for (int64_t s = 0; s < n - 2; ++s) {
    if (c.strides[s] <= 0 || c.lhs_dilation[s] <= 0 || c.rhs_dilation[s] <= 0) {
      return Error(op, "window strides and dilations must be positive");
    }
  }
  if (c.feature_groups <= 0 || c.batch_groups <= 0) {
    return Error(op, "group counts must be positive");
  }
  if (c.feature_groups != 1 && c.batch_groups != 1) {
    return Error(op, "feature_group_count and batch_group_count cannot both exceed 1");
  }
  if (lhs[c.in_batch] % c.batch_groups != 0) {
    return Error(op, "input batch size is not a multiple of batch_group_count");
  }
  if (lhs[c.in_feature] % c.feature_groups != 0) {
    return Error(op, "input feature size is not a multiple of feature_group_count");
  }
  if (rhs[c.k_in] != lhs[c.in_feature] / c.feature_groups) {
    return Error(op, "kernel input features must equal input features / feature_group_count");
  }
  if (rhs[c.k_out] % c.batch_groups != 0 || rhs[c.k_out] % c.feature_groups != 0) {
    return Error(op, "kernel output features must be a multiple of the group count");
  }
  return Status::Ok();
}

// C25: the result dimensions; lhs and rhs already checked.
ir::Shape ConvResultShape(const ConvConfig& c, const ir::Shape& lhs, const ir::Shape& rhs) {
  ir::Shape result(lhs.size());
  result[c.out_batch] = lhs[c.in_batch] / c.batch_groups;
  result[c.out_feature] = rhs[c.k_out];
  for (int64_t s = 0; s < c.num_spatial(); ++s) {
    const int64_t in = lhs[c.in_spatial[s]], w = rhs[c.k_spatial[s]];
    const int64_t dilated_in = in == 0 ? 0 : (in - 1) * c.lhs_dilation[s] + 1;
    const int64_t padded = c.pad_lo[s] + dilated_in + c.pad_hi[s];
    const int64_t window = w == 0 ? 0 : (w - 1) * c.rhs_dilation[s] + 1;
    result[c.out_spatial[s]] =
        padded <= 0 || window > padded ? 0 : (padded - window) / c.strides[s] + 1;
  }
  return result;
}

Status VerifyCommon(const ir::Operation& op, int operands) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, operands));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  TPUSIM_RETURN_IF_ERROR(VerifyMatmulTypes(op, op.operand(0).type().element(),
                                           op.operand(1).type().element(),
                                           op.result(0).type().element()));
  return VerifyPrecisionConfig(op);
}

Status VerifyConvolution(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(VerifyCommon(op, 2));
  TPUSIM_ASSIGN_OR_RETURN(ConvConfig c, GetConvConfig(op));
  const ir::Shape& lhs = op.operand(0).type().shape();
  const ir::Shape& rhs = op.operand(1).type().shape();
  TPUSIM_RETURN_IF_ERROR(CheckConvConfig(op, c, lhs, rhs));
  return ExpectResultType(
      op, 0, ir::Type::Tensor(op.result(0).type().element(), ConvResultShape(c, lhs, rhs)));
}

// The padding is only known when running; the rest of the shape rule applies.
Status VerifyDynamicConv(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(VerifyCommon(op, 3));
  TPUSIM_ASSIGN_OR_RETURN(ConvConfig c, GetConvConfig(op));
  const ir::Type& pad = op.operand(2).type();
  if (!ir::IsInteger(pad.element()) || pad.shape() != ir::Shape{c.num_spatial(), 2}) {
    return Error(op, "padding operand must be an integer tensor of shape [" +
                         std::to_string(c.num_spatial()) + ", 2]");
  }
  const ir::Shape& lhs = op.operand(0).type().shape();
  const ir::Shape& rhs = op.operand(1).type().shape();
  TPUSIM_RETURN_IF_ERROR(CheckConvConfig(op, c, lhs, rhs));
  return op.result(0).type().rank() == static_cast<int64_t>(lhs.size())
             ? Status::Ok()
             : Error(op, "result rank must equal the operands' rank");
}

// ------------------------------------------------------------ evaluation

struct Geometry {
  int64_t groups, batch_per_group, cin, cout_per_group;
  ir::Shape window, out;  // spatial sizes
  int64_t window_size, out_size;
};

Geometry GeometryOf(const ConvConfig& c, const ir::Shape& lhs, const ir::Shape& rhs,
                    const ir::Shape& result) {
  Geometry g;
  g.groups = c.feature_groups * c.batch_groups;
  g.batch_per_group = lhs[c.in_batch] / c.batch_groups;
  g.cin = rhs[c.k_in];
  g.cout_per_group = rhs[c.k_out] / g.groups;
  for (int64_t s = 0; s < c.num_spatial(); ++s) {
    g.window.push_back(rhs[c.k_spatial[s]]);
    g.out.push_back(result[c.out_spatial[s]]);
  }
  g.window_size = ir::NumElements(g.window);
  g.out_size = ir::NumElements(g.out);
  return g;
}

// im2col: patches[g][(n, o...)][(w..., ci)] = the input element that kernel
// position w meets at output position o, or zero in padding and in the
// holes of lhs dilation.
template <typename T>
void FillPatches(const ConvConfig& c, const Geometry& g, const Tensor& lhs, T zero, T* out) {
  const std::vector<int64_t> strides = RowMajorStrides(lhs.shape());
  const T* in = lhs.data<T>();
  const int64_t spatial = c.num_spatial();
  const int64_t fstride = strides[c.in_feature];
  // One buffer for both indices: GCC 12 reports a bogus -Wfree-nonheap-object
  // on two vectors here.
  std::vector<int64_t> indices(2 * spatial, 0);
  std::span<int64_t> o(indices.data(), spatial), w(indices.data() + spatial, spatial);
  for (int64_t grp = 0; grp < g.groups; ++grp) {
    // A batch group takes a slice of the batch, a feature group of features.
    const int64_t batch0 = c.batch_groups > 1 ? grp * g.batch_per_group : 0;
    const int64_t feature0 = c.feature_groups > 1 ? grp * g.cin : 0;
    for (int64_t n = 0; n < g.batch_per_group; ++n) {
      const int64_t base = (batch0 + n) * strides[c.in_batch] + feature0 * fstride;
      do {
        do {
          int64_t off = base;
          bool inside = true;
          for (int64_t s = 0; s < spatial && inside; ++s) {
            const int64_t wi = c.reverse[s] ? g.window[s] - 1 - w[s] : w[s];
            const int64_t pos = o[s] * c.strides[s] + wi * c.rhs_dilation[s] - c.pad_lo[s];
            const int64_t in_dim = lhs.shape()[c.in_spatial[s]];
            inside = pos >= 0 && pos % c.lhs_dilation[s] == 0 &&
                     pos / c.lhs_dilation[s] < in_dim;
            off += pos / c.lhs_dilation[s] * strides[c.in_spatial[s]];
          }
          for (int64_t ci = 0; ci < g.cin; ++ci) out[ci] = inside ? in[off + ci * fstride] : zero;
          out += g.cin;
        } while (NextIndex(w, g.window));
      } while (NextIndex(o, g.out));
    }
  }
}

StatusOr<Tensor> Patches(const ConvConfig& c, const Geometry& g, const Tensor& lhs) {
  const ir::ElementType t = lhs.element();
  ir::Shape shape = {g.groups, g.batch_per_group * g.out_size, g.window_size * g.cin};
  TPUSIM_RETURN_IF_ERROR(CheckedByteSize(shape, ir::StorageBytes(t)).status());
  TPUSIM_ASSIGN_OR_RETURN(Tensor patches, Tensor::Allocate(ir::Type::Tensor(t, shape)));
  if (patches.num_elements() == 0) return patches;
  // The padding value is the element type's zero (not all-zero bits for
  // f8E8M0FNU, which has no zero).
  uint8_t zero_bytes[16] = {};
  numerics::StoreDouble(t, 0.0, zero_bytes);
  DispatchByWidth(ir::StorageBytes(t), [&]<typename T>() {
    T zero;
    std::memcpy(&zero, zero_bytes, sizeof(T));
    FillPatches<T>(c, g, lhs, zero, patches.mutable_data<T>());
  });
  return patches;
}

// The kernel as [group, (w..., ci), co] (row-major over the window).
StatusOr<Tensor> KernelMatrix(const ConvConfig& c, const Geometry& g, const Tensor& rhs) {
  const std::vector<int64_t> strides = RowMajorStrides(rhs.shape());
  ir::Shape shape = {g.groups};
  std::vector<int64_t> src = {g.cout_per_group * strides[c.k_out]};
  for (int64_t s = 0; s < c.num_spatial(); ++s) {
    shape.push_back(g.window[s]);
    src.push_back(strides[c.k_spatial[s]]);
  }
  shape.push_back(g.cin);
  src.push_back(strides[c.k_in]);
  shape.push_back(g.cout_per_group);
  src.push_back(strides[c.k_out]);
  TPUSIM_ASSIGN_OR_RETURN(Tensor k, Tensor::Allocate(ir::Type::Tensor(rhs.element(), shape)));
  StridedCopier(ir::StorageBytes(rhs.element()), shape, src, RowMajorStrides(shape))
      .Run(rhs.raw(), k.mutable_raw());
  return k;
}

StatusOr<Tensor> RunConvolution(const ConvConfig& c, const Tensor& lhs, const Tensor& rhs,
                                const ir::Type& result_type, const MatmulNumerics& num) {
  const Geometry g = GeometryOf(c, lhs.shape(), rhs.shape(), result_type.shape());
  TPUSIM_ASSIGN_OR_RETURN(Tensor patches, Patches(c, g, lhs));
  TPUSIM_ASSIGN_OR_RETURN(Tensor kernel, KernelMatrix(c, g, rhs));
  MatmulProblem p;
  p.batch = g.groups;
  p.m = g.batch_per_group * g.out_size;
  p.k = g.window_size * g.cin;
  p.n = g.cout_per_group;
  p.lhs = {&patches, 0, {p.m * p.k, p.k, 1}};
  p.rhs = {&kernel, 0, {p.k * p.n, p.n, 1}};
  TPUSIM_ASSIGN_OR_RETURN(Tensor prod, BatchedMatmul(p, result_type.element(), num));
  // [group, n, o..., co] -> the result layout.
  TPUSIM_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(result_type));
  const std::vector<int64_t> rs = RowMajorStrides(result_type.shape());
  ir::Shape shape = {g.groups, g.batch_per_group};
  std::vector<int64_t> dst = {g.cout_per_group * rs[c.out_feature], rs[c.out_batch]};
  for (int64_t s = 0; s < c.num_spatial(); ++s) {
    shape.push_back(g.out[s]);
    dst.push_back(rs[c.out_spatial[s]]);
  }
  shape.push_back(g.cout_per_group);
  dst.push_back(rs[c.out_feature]);
  StridedCopier(ir::StorageBytes(out.element()), shape, RowMajorStrides(shape), dst)
      .Run(prod.raw(), out.mutable_raw());
  return out;
}

StatusOr<std::vector<Tensor>> EvalConvolution(EvalContext& ctx, const ir::Operation& op,
                                              std::span<const Tensor> operands) {
  TPUSIM_ASSIGN_OR_RETURN(ConvConfig c, GetConvConfig(op));
  TPUSIM_ASSIGN_OR_RETURN(MatmulNumerics num, SelectMatmulNumerics(ctx, op));
  TPUSIM_ASSIGN_OR_RETURN(Tensor out, RunConvolution(c, operands[0], operands[1],
                                                     op.result(0).type(), num));
  return std::vector<Tensor>{std::move(out)};
}

StatusOr<std::vector<Tensor>> EvalDynamicConv(EvalContext& ctx, const ir::Operation& op,
                                              std::span<const Tensor> operands) {
  TPUSIM_ASSIGN_OR_RETURN(ConvConfig c, GetConvConfig(op));
  const Tensor& pad = operands[2];
  std::vector<int64_t> flat(pad.num_elements());
  for (int64_t i = 0, n = pad.num_elements(); i < n; ++i) {
    flat[i] = numerics::LoadAsInt64(pad.element(),
                                    pad.raw() + i * ir::StorageBytes(pad.element()));
  }
  TPUSIM_RETURN_IF_ERROR(SetPadding(op, flat, c));
  const ir::Shape expected = ConvResultShape(c, operands[0].shape(), operands[1].shape());
  if (expected != op.result(0).type().shape()) {
    return Error(op, "padding " + FormatInts(flat) + " gives result shape " +
                         ir::Type::Tensor(op.result(0).type().element(), expected).ToString() +
                         ", not the declared " + op.result(0).type().ToString());
  }
  TPUSIM_ASSIGN_OR_RETURN(MatmulNumerics num, SelectMatmulNumerics(ctx, op));
  TPUSIM_ASSIGN_OR_RETURN(Tensor out, RunConvolution(c, operands[0], operands[1],
                                                     op.result(0).type(), num));
  return std::vector<Tensor>{std::move(out)};
}

// The im2col product per group: (batch x output positions) rows against
// (input features x window) contraction and the group's output features.
// The padding operand of dynamic_conv does not change the product's size.
Work ConvWork(const ir::Operation& op) {
  Work w = ReadsAndWrites(op);
  auto c = GetConvConfig(op);
  if (!c.ok()) return w;
  Geometry g = GeometryOf(*c, op.operand(0).type().shape(), op.operand(1).type().shape(),
                          op.result(0).type().shape());
  MatmulWork mm = MxuWork(op, g.groups, g.batch_per_group * g.out_size,
                          g.cin * g.window_size, g.cout_per_group);
  w.flops = mm.flops();
  w.matmuls.push_back(mm);
  return w;
}

// Batch and output features may be split; input features are a reduction
// whose partial sums add up; a spatial dimension splits with halos from the
// neighbours unless the input is dilated. Grouped convolutions stay whole.
std::optional<ShardingRule> ConvRule(const ir::Operation& op) {
  auto c = GetConvConfig(op);
  if (!c.ok() || c->feature_groups != 1 || c->batch_groups != 1) return std::nullopt;
  const ir::Type& in = op.operand(0).type();
  const ir::Type& kernel = op.operand(1).type();
  ShardingRule rule;
  rule.operands = {std::vector<int>(in.rank(), -1), std::vector<int>(kernel.rank(), -1)};
  rule.results = {std::vector<int>(op.result(0).type().rank(), -1)};
  rule.operands[0][c->in_batch] = rule.results[0][c->out_batch] = rule.Add(in.dim(c->in_batch));
  rule.operands[1][c->k_out] = rule.results[0][c->out_feature] = rule.Add(kernel.dim(c->k_out));
  rule.operands[0][c->in_feature] = rule.operands[1][c->k_in] = rule.Add(in.dim(c->in_feature));
  rule.combiner = "stablehlo.add";
  const ir::Type& out = op.result(0).type();
  for (int64_t i = 0; i < c->num_spatial(); ++i) {
    if (c->lhs_dilation[i] != 1) continue;
    const int64_t in_dim = c->in_spatial[i], out_dim = c->out_spatial[i];
    const int f = rule.Add(out.dim(out_dim));
    rule.factors[f].window =
        ShardingRule::Window{.input = in.dim(in_dim),
                             .output = out.dim(out_dim),
                             .size = (kernel.dim(c->k_spatial[i]) - 1) * c->rhs_dilation[i] + 1,
                             .stride = c->strides[i],
                             .pad_lo = c->pad_lo[i],
                             .padding_row = i};
    rule.operands[0][in_dim] = rule.results[0][out_dim] = f;
  }
  rule.padding = "padding";
  rule.pad_values = {-1, -1};
  return rule;
}

// Both forms' result types; a dynamic_conv's padding operand must be known
// before the program runs.
StatusOr<std::vector<ir::Type>> InferConvolution(const ir::Operation& op, Values values) {
  const bool dynamic = op.name_str() == "stablehlo.dynamic_conv";
  TPUSIM_RETURN_IF_ERROR(ExpectOneResult(op, dynamic ? 3 : 2));
  TPUSIM_ASSIGN_OR_RETURN(ConvConfig c, GetConvConfig(op));
  if (dynamic) {
    if (values.size() < 3 || values[2] == nullptr) {
      return Error(op, "padding is not known before the program runs");
    }
    TPUSIM_RETURN_IF_ERROR(SetPadding(op, IndexValues(*values[2]), c));
  }
  const ir::Shape& lhs = op.operand(0).type().shape();
  const ir::Shape& rhs = op.operand(1).type().shape();
  TPUSIM_RETURN_IF_ERROR(CheckConvConfig(op, c, lhs, rhs));
  return OneResult(op, ConvResultShape(c, lhs, rhs));
}

TPUSIM_REGISTER_OP({.name = "stablehlo.convolution",
                    .verify = VerifyConvolution,
                    .infer = InferConvolution,
                    .eval = EvalConvolution,
                    .work = ConvWork,
                    .sharding_rule = ConvRule});
TPUSIM_REGISTER_OP({.name = "stablehlo.dynamic_conv",
                    .verify = VerifyDynamicConv,
                    .infer = InferConvolution,
                    .eval = EvalDynamicConv,
                    .work = ConvWork});

}  // namespace
}  // namespace tpusim::ops

// CHLO ops with structure beyond one element at a time, evaluated directly
// rather than lowered: chlo.top_k and chlo.scan.
#include "ops/kernels/region_kernels.h"
#include "ops/sort.h"
#include "ops/util/index_util.h"
#include "ops/util/op_util.h"
#include "ops/util/work_util.h"
#include "tpusim/numerics/float_formats.h"

namespace tpusim::ops {
namespace {

ir::Shape WithoutDim(const ir::Shape& s, int64_t dim) {
  ir::Shape out = s;
  out.erase(out.begin() + dim);
  return out;
}

// ---- chlo.top_k: the k largest entries of each last-dimension row ----

Status VerifyTopK(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 2));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  TPUSIM_ASSIGN_OR_RETURN(ir::Attribute k_attr, GetAttr(op, "k", ir::Attribute::Kind::kInt));
  const ir::Type& operand = op.operand(0).type();
  if (operand.rank() == 0) return OpError(op, "operand must have rank >= 1");
  const int64_t k = k_attr.int_value();
  if (k < 0 || k > operand.dim(operand.rank() - 1)) {
    return OpError(op, "k = " + std::to_string(k) + " is out of range for " + operand.ToString());
  }
  ir::Shape shape = operand.shape();
  shape.back() = k;
  TPUSIM_RETURN_IF_ERROR(ExpectResultType(op, 0, ir::Type::Tensor(operand.element(), shape)));
  const ir::Type& indices = op.result(1).type();
  if (indices.shape() != shape || !ir::IsInteger(indices.element())) {
    return OpError(op, "indices must be an integer tensor of shape " + FormatInts(shape) +
                           ", got " + indices.ToString());
  }
  return Status::Ok();
}

StatusOr<std::vector<Tensor>> EvalTopK(EvalContext&, const ir::Operation& op,
                                       std::span<const Tensor> in) {
  const Tensor& x = in[0];
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> r, AllocateResults(op));
  const int64_t n = x.shape().back();
  const int64_t k = op.attr("k").int_value();
  const int64_t rows = n == 0 ? 0 : x.num_elements() / n;
  // Descending in IEEE totalOrder for floats (NaN above +inf); ties keep
  // the lower index first.
  const CompareMatch greater{CompareDirection::kGt, ir::IsFloat(x.element())};
  const ir::ElementType index_type = r[1].element();
  const int index_width = ir::StorageBytes(index_type);
  const bool ok = WithCompareKernel(x.element(), greater, [&](auto gt) {
    using S = typename decltype(gt)::Storage;
    std::vector<int64_t> perm(n);
    for (int64_t row = 0; row < rows; ++row) {
      const S* v = x.data<S>() + row * n;
      for (int64_t i = 0; i < n; ++i) perm[i] = i;
      StableSort(perm, [&](int64_t a, int64_t b) { return gt(v[a], v[b]); });
      S* values = r[0].mutable_data<S>() + row * k;
      uint8_t* indices = r[1].mutable_raw() + row * k * index_width;
      for (int64_t j = 0; j < k; ++j) {
        values[j] = v[perm[j]];
        numerics::StoreInt64(index_type, perm[j], indices + j * index_width);
      }
    }
  });
  if (!ok) {
    return Unimplemented("'chlo.top_k' of " + x.type().ToString() +
                         " (no total order for this element type)");
  }
  return r;
}

// Sorts each last-dimension row (a bitonic sort: one compare and a select
// of value and index per evaluation), then keeps k.
Work TopKWork(const ir::Operation& op) {
  Work w = ReadsAndWrites(op);
  const ir::Type& t = op.operand(0).type();
  if (t.rank() == 0 || t.dim(t.rank() - 1) == 0) return w;
  const int64_t n = t.dim(t.rank() - 1);
  w.AddVector(VectorClass::kAlu, 3 * (t.num_elements() / n) * BitonicEvaluations(n));
  return w;
}

TPUSIM_REGISTER_OP({.name = "chlo.top_k", .verify = VerifyTopK, .eval = EvalTopK,
                    .work = TopKWork});

// ---- chlo.scan ----
//
// For each position t along `dimension` (descending when is_reverse), the
// body maps (input slices at t..., carries...) to (output slices at t...,
// new carries...). Results are the outputs, then the final carries.

struct ScanSegments {
  int inputs, inits, outputs;
};

StatusOr<ScanSegments> ReadSegments(const ir::Operation& op) {
  std::vector<int64_t> in = GetIntsOr(op, "operandSegmentSizes", {});
  std::vector<int64_t> out = GetIntsOr(op, "resultSegmentSizes", {});
  if (in.size() != 2 || out.size() != 2 || in[0] < 0 || in[1] < 0 || out[0] < 0 ||
      in[0] + in[1] != op.num_operands() || out[0] + out[1] != op.num_results() ||
      out[1] != in[1]) {
    return OpError(op, "needs operandSegmentSizes [inputs, inits] and resultSegmentSizes "
                       "[outputs, carries] matching its operands, with carries = inits");
  }
  return ScanSegments{static_cast<int>(in[0]), static_cast<int>(in[1]), static_cast<int>(out[0])};
}

Status VerifyScan(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumRegions(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  TPUSIM_ASSIGN_OR_RETURN(ScanSegments seg, ReadSegments(op));
  if (seg.inputs + seg.outputs == 0) return OpError(op, "needs an input or an output");
  const int64_t dim = GetIntOr(op, "dimension", -1);
  const ir::Type& ref = seg.inputs > 0 ? op.operand(0).type() : op.result(0).type();
  if (dim < 0 || dim >= ref.rank()) {
    return OpError(op, "dimension " + std::to_string(dim) + " is out of range for " +
                           ref.ToString());
  }
  const int64_t length = ref.dim(dim);
  std::vector<ir::Type> args, rets;
  auto add_sliced = [&](const ir::Type& t, std::vector<ir::Type>& to) -> Status {
    if (t.rank() != ref.rank() || t.dim(dim) != length) {
      return OpError(op, "inputs and outputs must share rank and scan length, got " +
                             t.ToString() + " and " + ref.ToString());
    }
    to.push_back(ir::Type::Tensor(t.element(), WithoutDim(t.shape(), dim)));
    return Status::Ok();
  };
  for (int i = 0; i < seg.inputs; ++i) TPUSIM_RETURN_IF_ERROR(add_sliced(op.operand(i).type(), args));
  for (int i = 0; i < seg.outputs; ++i) TPUSIM_RETURN_IF_ERROR(add_sliced(op.result(i).type(), rets));
  for (int i = 0; i < seg.inits; ++i) {
    const ir::Type& init = op.operand(seg.inputs + i).type();
    TPUSIM_RETURN_IF_ERROR(ExpectResultType(op, seg.outputs + i, init));
    args.push_back(init);
    rets.push_back(init);
  }
  return CheckRegionSignature(op, op.region(0), "body", args, rets);
}

// A copier between position t along `dim` of a tensor of `full` shape and a
// contiguous slice of that shape without dim; `to_slice` picks the direction.
StridedCopier SliceCopier(const Tensor& full, int64_t dim, bool to_slice) {
  const ir::Shape slice = WithoutDim(full.shape(), dim);
  const std::vector<int64_t> full_strides = WithoutDim(RowMajorStrides(full.shape()), dim);
  const std::vector<int64_t> slice_strides = RowMajorStrides(slice);
  const int w = ir::StorageBytes(full.element());
  return to_slice ? StridedCopier(w, slice, full_strides, slice_strides)
                  : StridedCopier(w, slice, slice_strides, full_strides);
}

// Byte offset of position t along `dim`.
int64_t SliceOffset(const Tensor& full, int64_t dim, int64_t t) {
  return t * RowMajorStrides(full.shape())[dim] * ir::StorageBytes(full.element());
}

StatusOr<std::vector<Tensor>> EvalScan(EvalContext& ctx, const ir::Operation& op,
                                       std::span<const Tensor> in) {
  TPUSIM_ASSIGN_OR_RETURN(ScanSegments seg, ReadSegments(op));
  const int64_t dim = op.attr("dimension").int_value();
  ir::Attribute reverse_attr = op.attr("is_reverse");
  const bool reverse = reverse_attr && reverse_attr.kind() == ir::Attribute::Kind::kBool &&
                       reverse_attr.bool_value();
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> results, AllocateResults(op));
  const ir::Type& ref = seg.inputs > 0 ? in[0].type() : results[0].type();
  const int64_t length = ref.dim(dim);

  std::vector<Tensor> args(seg.inputs + seg.inits);
  for (int i = 0; i < seg.inits; ++i) args[seg.inputs + i] = in[seg.inputs + i];
  for (int64_t step = 0; step < length; ++step) {
    const int64_t t = reverse ? length - 1 - step : step;
    for (int i = 0; i < seg.inputs; ++i) {
      TPUSIM_ASSIGN_OR_RETURN(args[i], Tensor::Allocate(ir::Type::Tensor(
                                           in[i].element(), WithoutDim(in[i].shape(), dim))));
      SliceCopier(in[i], dim, /*to_slice=*/true)
          .Run(in[i].raw() + SliceOffset(in[i], dim, t), args[i].mutable_raw());
    }
    TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> out, ctx.RunRegion(op.region(0), args));
    for (int j = 0; j < seg.outputs; ++j) {
      SliceCopier(results[j], dim, /*to_slice=*/false)
          .Run(out[j].raw(), results[j].mutable_raw() + SliceOffset(results[j], dim, t));
    }
    for (int i = 0; i < seg.inits; ++i) args[seg.inputs + i] = std::move(out[seg.outputs + i]);
  }
  for (int i = 0; i < seg.inits; ++i) results[seg.outputs + i] = args[seg.inputs + i];
  return results;
}

// The body runs once per position on slices, so its ops together touch
// every element of the scanned tensors once each.
Work ScanWork(const ir::Operation& op) {
  Work w = ReadsAndWrites(op);
  auto seg = ReadSegments(op);
  if (!seg.ok() || op.num_regions() != 1 || seg->inputs + seg->outputs == 0) return w;
  const ir::Type& ref = seg->inputs > 0 ? op.operand(0).type() : op.result(0).type();
  AddRegionWork(w, op.region(0), ref.num_elements(), IsFloatTensor(ref));
  return w;
}

TPUSIM_REGISTER_OP({.name = "chlo.scan", .verify = VerifyScan, .eval = EvalScan,
                    .work = ScanWork});

}  // namespace
}  // namespace tpusim::ops

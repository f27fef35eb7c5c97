// Lowerings of the computing opcodes with structure: dot, convolution, the
// reductions and other ops with a `to_apply` body, scatter, sort, and the
// linear algebra, fft and random-bit ops.
#include "frontend/hlo/lower.h"

namespace tpusim::frontend {
namespace {

using L = HloLowering;
using ir::Attribute;

Attribute IntList(const std::vector<int64_t>& v) {
  std::vector<Attribute> out;
  for (int64_t x : v) out.push_back(Attribute::Int(x));
  return Attribute::Array(std::move(out));
}

// Struct fields for integer-list attributes; absent ones stay absent (empty).
Status AddListFields(L& l, const HloInstruction& inst,
                     std::initializer_list<std::pair<std::string_view, std::string_view>> keys,
                     std::vector<ir::NamedAttribute>* fields) {
  for (auto [hlo, field] : keys) {
    TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> v, AttrIntsOr(l, inst, hlo, {}));
    if (!v.empty()) fields->emplace_back(std::string(field), IntList(v));
  }
  return Status::Ok();
}

std::vector<ir::Type> ParamTypes(const HloComputation& comp) {
  std::vector<ir::Type> out;
  for (int i : comp.parameters) out.push_back(comp.instructions[i].type);
  return out;
}

// An op whose results are `inst`'s shape split into its elements and whose
// single region is the computation named by `key`.
StatusOr<ir::Operation*> WithBody(L& l, const HloInstruction& inst, std::string_view name,
                                  std::vector<ir::Value> operands, std::string_view key) {
  TPUSIM_ASSIGN_OR_RETURN(const HloComputation* comp, l.Called(inst, key));
  ir::Operation* op = l.Emit(inst, name, std::move(operands), L::ResultTypes(inst, true));
  TPUSIM_RETURN_IF_ERROR(
      l.LowerRegionWithArgs(inst, *comp, &op->AddRegion(), ParamTypes(*comp), true));
  return op;
}

Status ExpectEven(const L& l, const HloInstruction& inst) {
  if (!inst.operands.empty() && inst.operands.size() % 2 == 0) return Status::Ok();
  return l.Error(inst, std::string(inst.opcode) + " takes inputs and as many init values");
}

ir::Attribute Padding(const std::vector<int64_t>& low, const std::vector<int64_t>& high) {
  std::vector<int64_t> flat;
  for (size_t i = 0; i < low.size(); ++i) {
    flat.push_back(low[i]);
    flat.push_back(high[i]);
  }
  return I64Matrix(static_cast<int64_t>(low.size()), 2, flat);
}

StatusOr<HloValue> Dot(L& l, const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(l.ExpectOperands(inst, 2));
  for (std::string_view key : {"algorithm", "sparsity"}) {
    if (inst.Attr(key) != nullptr) {
      return l.Unsupported(inst, "dot attribute '" + std::string(key) + "' is not supported");
    }
  }
  std::vector<ir::NamedAttribute> fields;
  TPUSIM_RETURN_IF_ERROR(AddListFields(l, inst,
                                       {{"lhs_batch_dims", "lhs_batching_dimensions"},
                                        {"rhs_batch_dims", "rhs_batching_dimensions"},
                                        {"lhs_contracting_dims", "lhs_contracting_dimensions"},
                                        {"rhs_contracting_dims", "rhs_contracting_dimensions"}},
                                       &fields));
  TPUSIM_ASSIGN_OR_RETURN(Attribute precision, AttrPrecisionConfig(l, inst));
  ir::Operation* op = l.Emit(inst, "stablehlo.dot_general", l.AllOperands(inst), {inst.type});
  op->attrs().Set("dot_dimension_numbers", Attribute::Struct("stablehlo.dot", std::move(fields)));
  op->attrs().Set("precision_config", precision);
  return HloValue::Whole(op->result(0));
}

// One side of `dim_labels=b01f_01io->b01f`.
struct ConvLabels {
  int64_t batch = -1, feature = -1;  // b/f, or o/i for the kernel
  std::vector<int64_t> spatial;
};

StatusOr<ConvLabels> ReadLabels(const L& l, std::string_view text, size_t offset, char batch,
                                char feature) {
  ConvLabels out;
  std::vector<int64_t> spatial(text.size(), -1);
  size_t count = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    int64_t d = static_cast<int64_t>(i);
    if (c == batch && out.batch < 0) {
      out.batch = d;
    } else if (c == feature && out.feature < 0) {
      out.feature = d;
    } else if (c >= '0' && c <= '9' && static_cast<size_t>(c - '0') < spatial.size() &&
               spatial[c - '0'] < 0) {
      spatial[c - '0'] = d;
      ++count;
    } else {
      return l.source().ErrorAt(offset + i, "unexpected '" + std::string(1, c) + "' in dim_labels");
    }
  }
  spatial.resize(count);
  for (int64_t s : spatial) {
    if (s < 0) return l.source().ErrorAt(offset, "spatial dim_labels must be 0..n-1");
  }
  if (out.batch < 0 || out.feature < 0) {
    return l.source().ErrorAt(offset, "dim_labels lack the " + std::string(1, batch) + " or " +
                                          std::string(1, feature) + " dimension");
  }
  out.spatial = std::move(spatial);
  return out;
}

StatusOr<Attribute> ConvDimensionNumbers(L& l, const HloInstruction& inst, size_t* spatial) {
  const HloAttr* a = inst.Attr("dim_labels");
  if (a == nullptr) return l.Error(inst, "convolution needs attribute 'dim_labels'");
  std::string_view v = a->value;
  size_t base = static_cast<size_t>(v.data() - l.source().text().data());
  size_t under = v.find('_');
  size_t arrow = v.find("->");
  if (under == std::string_view::npos || arrow == std::string_view::npos || arrow < under) {
    return l.source().ErrorAt(base, "dim_labels must read like b01f_01io->b01f");
  }
  TPUSIM_ASSIGN_OR_RETURN(ConvLabels in, ReadLabels(l, v.substr(0, under), base, 'b', 'f'));
  TPUSIM_ASSIGN_OR_RETURN(ConvLabels k, ReadLabels(l, v.substr(under + 1, arrow - under - 1),
                                                   base + under + 1, 'o', 'i'));
  TPUSIM_ASSIGN_OR_RETURN(ConvLabels out,
                          ReadLabels(l, v.substr(arrow + 2), base + arrow + 2, 'b', 'f'));
  if (in.spatial.size() != k.spatial.size() || in.spatial.size() != out.spatial.size()) {
    return l.source().ErrorAt(base, "dim_labels disagree on the number of spatial dimensions");
  }
  *spatial = in.spatial.size();
  return Attribute::Struct("stablehlo.conv",
                           {{"input_batch_dimension", Attribute::Int(in.batch)},
                            {"input_feature_dimension", Attribute::Int(in.feature)},
                            {"input_spatial_dimensions", IntList(in.spatial)},
                            {"kernel_input_feature_dimension", Attribute::Int(k.feature)},
                            {"kernel_output_feature_dimension", Attribute::Int(k.batch)},
                            {"kernel_spatial_dimensions", IntList(k.spatial)},
                            {"output_batch_dimension", Attribute::Int(out.batch)},
                            {"output_feature_dimension", Attribute::Int(out.feature)},
                            {"output_spatial_dimensions", IntList(out.spatial)}});
}

StatusOr<HloValue> Convolution(L& l, const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(l.ExpectOperands(inst, 2));
  size_t spatial = 0;
  TPUSIM_ASSIGN_OR_RETURN(Attribute dnums, ConvDimensionNumbers(l, inst, &spatial));
  TPUSIM_ASSIGN_OR_RETURN(HloWindow w, AttrWindow(l, inst, static_cast<int64_t>(spatial)));
  TPUSIM_ASSIGN_OR_RETURN(int64_t features, AttrIntOr(l, inst, "feature_group_count", 1));
  TPUSIM_ASSIGN_OR_RETURN(int64_t batches, AttrIntOr(l, inst, "batch_group_count", 1));
  TPUSIM_ASSIGN_OR_RETURN(Attribute precision, AttrPrecisionConfig(l, inst));
  ir::Operation* op = l.Emit(inst, "stablehlo.convolution", l.AllOperands(inst), {inst.type});
  ir::AttributeMap& a = op->attrs();
  a.Set("window_strides", I64Array(w.stride));
  a.Set("padding", Padding(w.pad_low, w.pad_high));
  a.Set("lhs_dilation", I64Array(w.lhs_dilate));
  a.Set("rhs_dilation", I64Array(w.rhs_dilate));
  for (int64_t r : w.reversal) {
    if (r != 0) {
      a.Set("window_reversal", Attribute::DenseArray(ir::ElementType::kI1, w.reversal));
      break;
    }
  }
  a.Set("dimension_numbers", dnums);
  a.Set("feature_group_count", I64(features));
  a.Set("batch_group_count", I64(batches));
  a.Set("precision_config", precision);
  return HloValue::Whole(op->result(0));
}

StatusOr<HloValue> Reduce(L& l, const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(ExpectEven(l, inst));
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> dims, AttrInts(l, inst, "dimensions"));
  TPUSIM_ASSIGN_OR_RETURN(ir::Operation * op,
                          WithBody(l, inst, "stablehlo.reduce", l.AllOperands(inst), "to_apply"));
  op->attrs().Set("dimensions", I64Array(dims));
  return l.ResultOf(inst, op);
}

StatusOr<HloValue> ReduceWindow(L& l, const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(ExpectEven(l, inst));
  ir::Value x = l.Operand(inst, 0);
  if (!x.type().is_tensor()) return l.Error(inst, "reduce-window of a non-array");
  TPUSIM_ASSIGN_OR_RETURN(HloWindow w, AttrWindow(l, inst, x.type().rank()));
  TPUSIM_ASSIGN_OR_RETURN(ir::Operation * op, WithBody(l, inst, "stablehlo.reduce_window",
                                                       l.AllOperands(inst), "to_apply"));
  ir::AttributeMap& a = op->attrs();
  a.Set("window_dimensions", I64Array(w.size));
  a.Set("window_strides", I64Array(w.stride));
  a.Set("base_dilations", I64Array(w.lhs_dilate));
  a.Set("window_dilations", I64Array(w.rhs_dilate));
  a.Set("padding", Padding(w.pad_low, w.pad_high));
  return l.ResultOf(inst, op);
}

StatusOr<HloValue> SelectAndScatter(L& l, const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(l.ExpectOperands(inst, 3));
  ir::Value x = l.Operand(inst, 0);
  if (!x.type().is_tensor()) return l.Error(inst, "select-and-scatter of a non-array");
  TPUSIM_ASSIGN_OR_RETURN(HloWindow w, AttrWindow(l, inst, x.type().rank()));
  TPUSIM_ASSIGN_OR_RETURN(const HloComputation* select, l.Called(inst, "select"));
  TPUSIM_ASSIGN_OR_RETURN(const HloComputation* scatter, l.Called(inst, "scatter"));
  ir::Operation* op =
      l.Emit(inst, "stablehlo.select_and_scatter", l.AllOperands(inst), {inst.type});
  TPUSIM_RETURN_IF_ERROR(
      l.LowerRegionWithArgs(inst, *select, &op->AddRegion(), ParamTypes(*select), true));
  TPUSIM_RETURN_IF_ERROR(
      l.LowerRegionWithArgs(inst, *scatter, &op->AddRegion(), ParamTypes(*scatter), true));
  op->attrs().Set("window_dimensions", I64Array(w.size));
  op->attrs().Set("window_strides", I64Array(w.stride));
  op->attrs().Set("padding", Padding(w.pad_low, w.pad_high));
  return HloValue::Whole(op->result(0));
}

StatusOr<HloValue> Scatter(L& l, const HloInstruction& inst) {
  if (inst.operands.size() < 3 || inst.operands.size() % 2 == 0) {
    return l.Error(inst, "scatter takes inputs, indices and as many updates as inputs");
  }
  std::vector<ir::NamedAttribute> fields;
  TPUSIM_RETURN_IF_ERROR(
      AddListFields(l, inst,
                    {{"update_window_dims", "update_window_dims"},
                     {"inserted_window_dims", "inserted_window_dims"},
                     {"input_batching_dims", "input_batching_dims"},
                     {"scatter_indices_batching_dims", "scatter_indices_batching_dims"},
                     {"scatter_dims_to_operand_dims", "scatter_dims_to_operand_dims"}},
                    &fields));
  TPUSIM_ASSIGN_OR_RETURN(int64_t ivd, AttrInt(l, inst, "index_vector_dim"));
  fields.emplace_back("index_vector_dim", Attribute::Int(ivd));
  TPUSIM_ASSIGN_OR_RETURN(bool sorted, AttrBoolOr(l, inst, "indices_are_sorted", false));
  TPUSIM_ASSIGN_OR_RETURN(bool unique, AttrBoolOr(l, inst, "unique_indices", false));
  TPUSIM_ASSIGN_OR_RETURN(ir::Operation * op,
                          WithBody(l, inst, "stablehlo.scatter", l.AllOperands(inst), "to_apply"));
  op->attrs().Set("scatter_dimension_numbers",
                  Attribute::Struct("stablehlo.scatter", std::move(fields)));
  op->attrs().Set("indices_are_sorted", Attribute::Bool(sorted));
  op->attrs().Set("unique_indices", Attribute::Bool(unique));
  return l.ResultOf(inst, op);
}

StatusOr<HloValue> Sort(L& l, const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(l.ExpectMinOperands(inst, 1));
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> dims, AttrInts(l, inst, "dimensions"));
  if (dims.size() != 1) return l.Error(inst, "sort takes one dimension");
  TPUSIM_ASSIGN_OR_RETURN(bool stable, AttrBoolOr(l, inst, "is_stable", false));
  TPUSIM_ASSIGN_OR_RETURN(ir::Operation * op,
                          WithBody(l, inst, "stablehlo.sort", l.AllOperands(inst), "to_apply"));
  op->attrs().Set("dimension", I64(dims[0]));
  op->attrs().Set("is_stable", Attribute::Bool(stable));
  return l.ResultOf(inst, op);
}

StatusOr<HloValue> Map(L& l, const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(l.ExpectMinOperands(inst, 1));
  ir::Value x = l.Operand(inst, 0);
  if (!x.type().is_tensor()) return l.Error(inst, "map of a non-array");
  std::vector<int64_t> all;
  for (int64_t d = 0; d < x.type().rank(); ++d) all.push_back(d);
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> dims, AttrIntsOr(l, inst, "dimensions", all));
  TPUSIM_ASSIGN_OR_RETURN(ir::Operation * op,
                          WithBody(l, inst, "stablehlo.map", l.AllOperands(inst), "to_apply"));
  op->attrs().Set("dimensions", I64Array(dims));
  return l.ResultOf(inst, op);
}

StatusOr<HloValue> RngBitGenerator(L& l, const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(l.ExpectOperands(inst, 1));
  std::string_view algorithm = AttrWord(inst, "algorithm");
  std::string name = algorithm == "rng_three_fry"                      ? "THREE_FRY"
                     : algorithm == "rng_philox"                       ? "PHILOX"
                     : algorithm == "rng_default" || algorithm.empty() ? "DEFAULT"
                                                                       : "";
  if (name.empty()) {
    return l.Unsupported(inst, "rng algorithm '" + std::string(algorithm) + "' is not supported");
  }
  if (!inst.type.is_tuple() || inst.type.tuple_elements().size() != 2) {
    return l.Error(inst, "rng-bit-generator has the shape (state, bits)");
  }
  ir::Operation* op =
      l.Emit(inst, "stablehlo.rng_bit_generator", l.AllOperands(inst), L::ResultTypes(inst, true));
  op->attrs().Set("rng_algorithm", Attribute::Enum("stablehlo.rng_algorithm", name));
  return l.ResultOf(inst, op);
}

StatusOr<HloValue> Cholesky(L& l, const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(l.ExpectOperands(inst, 1));
  TPUSIM_ASSIGN_OR_RETURN(bool lower, AttrBoolOr(l, inst, "lower", false));
  ir::Operation* op = l.Emit(inst, "stablehlo.cholesky", l.AllOperands(inst), {inst.type});
  op->attrs().Set("lower", Attribute::Bool(lower));
  return HloValue::Whole(op->result(0));
}

StatusOr<HloValue> TriangularSolve(L& l, const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(l.ExpectOperands(inst, 2));
  std::string transpose(AttrWord(inst, "transpose_a"));
  if (transpose.empty()) transpose = "NO_TRANSPOSE";
  if (transpose != "NO_TRANSPOSE" && transpose != "TRANSPOSE" && transpose != "ADJOINT") {
    return l.Error(inst, "transpose_a must be NO_TRANSPOSE, TRANSPOSE or ADJOINT");
  }
  ir::Operation* op = l.Emit(inst, "stablehlo.triangular_solve", l.AllOperands(inst), {inst.type});
  for (std::string_view key : {"left_side", "lower", "unit_diagonal"}) {
    TPUSIM_ASSIGN_OR_RETURN(bool b, AttrBoolOr(l, inst, key, false));
    op->attrs().Set(std::string(key), Attribute::Bool(b));
  }
  op->attrs().Set("transpose_a", Attribute::Enum("stablehlo.transpose", transpose));
  return HloValue::Whole(op->result(0));
}

StatusOr<HloValue> Fft(L& l, const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(l.ExpectOperands(inst, 1));
  std::string type(AttrWord(inst, "fft_type"));
  if (type != "FFT" && type != "IFFT" && type != "RFFT" && type != "IRFFT") {
    return l.Error(inst, "fft needs fft_type=FFT|IFFT|RFFT|IRFFT");
  }
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> length, AttrInts(l, inst, "fft_length"));
  ir::Operation* op = l.Emit(inst, "stablehlo.fft", l.AllOperands(inst), {inst.type});
  op->attrs().Set("fft_type", Attribute::Enum("stablehlo.fft_type", type));
  op->attrs().Set("fft_length", I64Array(length));
  return HloValue::Whole(op->result(0));
}

// topk(x), k=2, largest=true: chlo.top_k, which takes the largest only.
StatusOr<HloValue> TopK(L& l, const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(l.ExpectOperands(inst, 1));
  TPUSIM_ASSIGN_OR_RETURN(int64_t k, AttrInt(l, inst, "k"));
  TPUSIM_ASSIGN_OR_RETURN(bool largest, AttrBoolOr(l, inst, "largest", true));
  if (!largest) return l.Unsupported(inst, "topk with largest=false is not supported");
  if (!inst.type.is_tuple() || inst.type.tuple_elements().size() != 2) {
    return l.Error(inst, "topk has the shape (values, indices)");
  }
  ir::Operation* op = l.Emit(inst, "chlo.top_k", l.AllOperands(inst), L::ResultTypes(inst, true));
  op->attrs().Set("k", I64(k));
  return l.ResultOf(inst, op);
}

}  // namespace

void AddComputeLowerings(LowerTable& t) {
  t.emplace("dot", Dot);
  t.emplace("convolution", Convolution);
  t.emplace("reduce", Reduce);
  t.emplace("reduce-window", ReduceWindow);
  t.emplace("select-and-scatter", SelectAndScatter);
  t.emplace("scatter", Scatter);
  t.emplace("sort", Sort);
  t.emplace("map", Map);
  t.emplace("rng-bit-generator", RngBitGenerator);
  t.emplace("cholesky", Cholesky);
  t.emplace("triangular-solve", TriangularSolve);
  t.emplace("fft", Fft);
  t.emplace("topk", TopK);
}

}  // namespace tpusim::frontend

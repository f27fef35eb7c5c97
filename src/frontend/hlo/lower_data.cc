// Lowerings of constants, tuples, shape manipulation and data movement, and
// the elementwise opcodes with attributes (compare, reduce-precision).
// Elementwise opcodes without attributes go through opcodes.h.
#include "frontend/hlo/lower.h"

namespace tpusim::frontend {
namespace {

using L = HloLowering;
using ir::Attribute;

HloValue Single(L& l, const HloInstruction& inst, std::string_view name,
                std::vector<ir::Value> operands,
                std::vector<std::pair<std::string, Attribute>> attrs) {
  ir::Operation* op = l.Emit(inst, name, std::move(operands), {inst.type});
  for (auto& [k, v] : attrs) op->attrs().Set(std::move(k), std::move(v));
  return HloValue::Whole(op->result(0));
}

Status ExpectArray(const L& l, const HloInstruction& inst) {
  if (inst.type.is_tensor()) return Status::Ok();
  return l.Error(
      inst, std::string(inst.opcode) + " must have an array shape, not " + inst.type.ToString());
}

StatusOr<HloValue> Constant(L& l, const HloInstruction& inst) {
  TPUSIM_ASSIGN_OR_RETURN(Attribute value, ParseHloLiteral(l.source(), inst.args, inst.type));
  if (!value) {
    // XLA printed `{...}` in place of a large literal: keep the shape so the
    // program can be timed; running it names this placeholder.
    ir::Operation* op = l.Emit(inst, "stablehlo.custom_call", {}, {inst.type});
    op->attrs().Set("call_target_name", Attribute::String("hlo.elided_constant"));
    return HloValue::Whole(op->result(0));
  }
  return Single(l, inst, "stablehlo.constant", {}, {{"value", value}});
}

StatusOr<HloValue> Tuple(L& l, const HloInstruction& inst) {
  // Kept split: a consumer that wants the whole tuple builds it.
  HloValue v{inst.type, {}, l.AllOperands(inst)};
  if (!inst.type.is_tuple() || inst.type.tuple_elements() != ir::TypesOf(v.elements)) {
    return l.Error(inst, "tuple shape " + inst.type.ToString() + " does not match its operands " +
                             ir::TypeListString(ir::TypesOf(v.elements)));
  }
  return v;
}

StatusOr<HloValue> GetTupleElement(L& l, const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(l.ExpectOperands(inst, 1));
  TPUSIM_ASSIGN_OR_RETURN(int64_t index, AttrInt(l, inst, "index"));
  const HloValue& tuple = l.OperandValue(inst, 0);
  if (!tuple.type.is_tuple()) return l.Error(inst, "get-tuple-element of a non-tuple");
  const std::vector<ir::Type>& types = tuple.type.tuple_elements();
  if (index < 0 || index >= static_cast<int64_t>(types.size())) {
    return l.Error(
        inst, "index " + std::to_string(index) + " is out of range for " + tuple.type.ToString());
  }
  if (types[index] != inst.type) {
    return l.Error(inst, "shape " + inst.type.ToString() + " does not match element " +
                             std::to_string(index) + " of " + tuple.type.ToString());
  }
  if (!tuple.whole) return HloValue::Whole(tuple.elements[index]);
  ir::Operation* op = l.Emit(inst, "stablehlo.get_tuple_element", {tuple.whole}, {inst.type});
  op->attrs().Set("index", Attribute::Int(index, ir::ElementType::kSI32));
  return HloValue::Whole(op->result(0));
}

StatusOr<HloValue> Iota(L& l, const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(l.ExpectOperands(inst, 0));
  TPUSIM_ASSIGN_OR_RETURN(int64_t dim, AttrInt(l, inst, "iota_dimension"));
  return Single(l, inst, "stablehlo.iota", {}, {{"iota_dimension", I64(dim)}});
}

// One operand and HLO's `dimensions={...}`, which `op` calls `attr`.
StatusOr<HloValue> WithDimensions(L& l, const HloInstruction& inst, std::string_view op,
                                  std::string_view attr) {
  TPUSIM_RETURN_IF_ERROR(l.ExpectOperands(inst, 1));
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> dims, AttrInts(l, inst, "dimensions"));
  return Single(l, inst, op, {l.Operand(inst, 0)}, {{std::string(attr), I64Array(dims)}});
}

StatusOr<HloValue> Broadcast(L& l, const HloInstruction& inst) {
  return WithDimensions(l, inst, "stablehlo.broadcast_in_dim", "broadcast_dimensions");
}

StatusOr<HloValue> Transpose(L& l, const HloInstruction& inst) {
  return WithDimensions(l, inst, "stablehlo.transpose", "permutation");
}

// The dimensions of `t` from major to minor: its physical order.
std::vector<int64_t> MajorToMinor(const ir::Type& t) {
  std::vector<int64_t> m2m = t.MinorToMajor();
  return std::vector<int64_t>(m2m.rbegin(), m2m.rend());
}

bool IsIdentity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

// A transpose of `x` by `perm`, or x itself for the identity.
ir::Value Permute(L& l, const HloInstruction& inst, ir::Value x, const std::vector<int64_t>& perm,
                  const ir::Type& result) {
  if (IsIdentity(perm)) return x;
  ir::Operation* op = l.Emit(inst, "stablehlo.transpose", {x}, {result});
  op->attrs().Set("permutation", I64Array(perm));
  return op->result(0);
}

// A bitcast reads the operand's buffer as the result's shape and layout.
// In logical terms: the operand in its physical (major-to-minor) order,
// reshaped to the result's physical shape, put back in the result's logical
// order. Transposes that follow the layouts move no data on the device.
// Bitcasts that change the element type are bitcast-convert's business.
StatusOr<HloValue> Bitcast(L& l, const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(l.ExpectOperands(inst, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectArray(l, inst));
  ir::Value x = l.Operand(inst, 0);
  const ir::Type& from = x.type();
  if (!from.is_tensor() || from.element() != inst.type.element() ||
      from.num_elements() != inst.type.num_elements()) {
    return l.Unsupported(inst, "bitcast from " + from.ToString() + " to " + inst.type.ToString() +
                                   " changes the element type or count");
  }
  std::vector<int64_t> to_physical = MajorToMinor(from);
  std::vector<int64_t> result_order = MajorToMinor(inst.type);
  ir::Shape physical, result_physical;
  for (int64_t d : to_physical) physical.push_back(from.dim(d));
  for (int64_t d : result_order) result_physical.push_back(inst.type.dim(d));
  ir::Value v = Permute(l, inst, x, to_physical, ir::Type::Tensor(from.element(), physical));
  if (IsIdentity(result_order)) {
    return HloValue::Whole(l.Emit(inst, "stablehlo.reshape", {v}, {inst.type})->result(0));
  }
  if (physical != result_physical) {
    v = l.Emit(inst, "stablehlo.reshape", {v}, {ir::Type::Tensor(from.element(), result_physical)})
            ->result(0);
  }
  std::vector<int64_t> back(result_order.size());
  for (size_t i = 0; i < result_order.size(); ++i) back[result_order[i]] = static_cast<int64_t>(i);
  return HloValue::Whole(Permute(l, inst, v, back, inst.type));
}

// `slice={[0:2], [1:4:2]}`.
StatusOr<HloValue> Slice(L& l, const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(l.ExpectOperands(inst, 1));
  const HloAttr* a = inst.Attr("slice");
  if (a == nullptr) return l.Error(inst, "slice needs attribute 'slice'");
  HloCursor c = CursorOver(l.source(), a->value);
  std::vector<int64_t> start, limit, stride;
  TPUSIM_RETURN_IF_ERROR(c.Expect('{', "'{' opening the slice"));
  while (!c.Consume('}')) {
    if (!start.empty()) TPUSIM_RETURN_IF_ERROR(c.Expect(',', "',' or '}'"));
    TPUSIM_RETURN_IF_ERROR(c.Expect('[', "'[' opening a dimension's slice"));
    TPUSIM_ASSIGN_OR_RETURN(int64_t s, c.ReadInt());
    TPUSIM_RETURN_IF_ERROR(c.Expect(':', "':'"));
    TPUSIM_ASSIGN_OR_RETURN(int64_t e, c.ReadInt());
    int64_t st = 1;
    if (c.Consume(':')) {
      TPUSIM_ASSIGN_OR_RETURN(st, c.ReadInt());
    }
    TPUSIM_RETURN_IF_ERROR(c.Expect(']', "']'"));
    start.push_back(s);
    limit.push_back(e);
    stride.push_back(st);
  }
  if (!c.AtEnd()) return c.Error("unexpected text after the slice");
  return Single(l, inst, "stablehlo.slice", {l.Operand(inst, 0)},
                {{"start_indices", I64Array(start)},
                 {"limit_indices", I64Array(limit)},
                 {"strides", I64Array(stride)}});
}

StatusOr<HloValue> Concatenate(L& l, const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(l.ExpectMinOperands(inst, 1));
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> dims, AttrInts(l, inst, "dimensions"));
  if (dims.size() != 1) return l.Error(inst, "concatenate takes one dimension");
  return Single(l, inst, "stablehlo.concatenate", l.AllOperands(inst),
                {{"dimension", I64(dims[0])}});
}

// `padding=0_1x2_3_1`: low_high[_interior] per dimension.
StatusOr<HloValue> Pad(L& l, const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(l.ExpectOperands(inst, 2));
  TPUSIM_RETURN_IF_ERROR(ExpectArray(l, inst));
  std::vector<int64_t> low, high, interior;
  std::string_view text = AttrWord(inst, "padding");
  if (text.empty() && inst.type.rank() > 0) return l.Error(inst, "pad needs attribute 'padding'");
  HloCursor c = CursorOver(l.source(), text);
  while (!c.AtEnd()) {
    if (!low.empty() && !c.ConsumeText("x")) return c.Error("expected 'x' between dimensions");
    int64_t v[3] = {0, 0, 0};
    int n = 0;
    do {
      if (n == 3) return c.Error("expected low_high or low_high_interior");
      TPUSIM_ASSIGN_OR_RETURN(v[n], c.ReadInt());
      ++n;
    } while (c.ConsumeText("_"));
    if (n < 2) return c.Error("expected low_high or low_high_interior");
    low.push_back(v[0]);
    high.push_back(v[1]);
    interior.push_back(v[2]);
  }
  return Single(l, inst, "stablehlo.pad", l.AllOperands(inst),
                {{"edge_padding_low", I64Array(low)},
                 {"edge_padding_high", I64Array(high)},
                 {"interior_padding", I64Array(interior)}});
}

StatusOr<HloValue> Reverse(L& l, const HloInstruction& inst) {
  return WithDimensions(l, inst, "stablehlo.reverse", "dimensions");
}

StatusOr<HloValue> DynamicSlice(L& l, const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(l.ExpectMinOperands(inst, 1));
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, AttrInts(l, inst, "dynamic_slice_sizes"));
  return Single(l, inst, "stablehlo.dynamic_slice", l.AllOperands(inst),
                {{"slice_sizes", I64Array(sizes)}});
}

StatusOr<HloValue> DynamicUpdateSlice(L& l, const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(l.ExpectMinOperands(inst, 2));
  return Single(l, inst, "stablehlo.dynamic_update_slice", l.AllOperands(inst), {});
}

Attribute IntList(const std::vector<int64_t>& v) {
  std::vector<Attribute> out;
  for (int64_t x : v) out.push_back(Attribute::Int(x));
  return Attribute::Array(std::move(out));
}

StatusOr<HloValue> Gather(L& l, const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(l.ExpectOperands(inst, 2));
  std::vector<ir::NamedAttribute> fields;
  for (std::string_view key : {"offset_dims", "collapsed_slice_dims", "operand_batching_dims",
                               "start_indices_batching_dims", "start_index_map"}) {
    TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> v, AttrIntsOr(l, inst, key, {}));
    fields.emplace_back(std::string(key), IntList(v));
  }
  TPUSIM_ASSIGN_OR_RETURN(int64_t ivd, AttrInt(l, inst, "index_vector_dim"));
  fields.emplace_back("index_vector_dim", Attribute::Int(ivd));
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, AttrInts(l, inst, "slice_sizes"));
  TPUSIM_ASSIGN_OR_RETURN(bool sorted, AttrBoolOr(l, inst, "indices_are_sorted", false));
  return Single(l, inst, "stablehlo.gather", l.AllOperands(inst),
                {{"dimension_numbers", Attribute::Struct("stablehlo.gather", std::move(fields))},
                 {"slice_sizes", I64Array(sizes)},
                 {"indices_are_sorted", Attribute::Bool(sorted)}});
}

StatusOr<HloValue> Compare(L& l, const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(l.ExpectOperands(inst, 2));
  std::string_view dir = AttrWord(inst, "direction");
  if (dir != "EQ" && dir != "NE" && dir != "LT" && dir != "LE" && dir != "GT" && dir != "GE") {
    return l.Error(inst, "compare needs direction=EQ|NE|LT|LE|GT|GE");
  }
  std::vector<std::pair<std::string, Attribute>> attrs = {
      {"comparison_direction",
       Attribute::Enum("stablehlo.comparison_direction", std::string(dir))}};
  if (std::string_view type = AttrWord(inst, "type"); !type.empty()) {
    if (type != "FLOAT" && type != "TOTALORDER" && type != "SIGNED" && type != "UNSIGNED") {
      return l.Error(inst, "compare type must be FLOAT, TOTALORDER, SIGNED or UNSIGNED");
    }
    attrs.emplace_back("compare_type",
                       Attribute::Enum("stablehlo.comparison_type", std::string(type)));
  }
  return Single(l, inst, "stablehlo.compare", l.AllOperands(inst), std::move(attrs));
}

StatusOr<HloValue> ReducePrecision(L& l, const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(l.ExpectOperands(inst, 1));
  TPUSIM_ASSIGN_OR_RETURN(int64_t e, AttrInt(l, inst, "exponent_bits"));
  TPUSIM_ASSIGN_OR_RETURN(int64_t m, AttrInt(l, inst, "mantissa_bits"));
  return Single(l, inst, "stablehlo.reduce_precision", {l.Operand(inst, 0)},
                {{"exponent_bits", Attribute::Int(e, ir::ElementType::kSI32)},
                 {"mantissa_bits", Attribute::Int(m, ir::ElementType::kSI32)}});
}

// add-dependency(x, token) orders x after the token's producer; domain marks
// a sharding boundary. Both are x for evaluation and timing.
StatusOr<HloValue> PassThrough(L& l, const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(l.ExpectMinOperands(inst, 1));
  const HloValue& v = l.OperandValue(inst, 0);
  if (v.type != inst.type) return l.Error(inst, "shape differs from its operand's");
  return v;
}

}  // namespace

void AddDataLowerings(LowerTable& t) {
  t.emplace("constant", Constant);
  t.emplace("tuple", Tuple);
  t.emplace("get-tuple-element", GetTupleElement);
  t.emplace("iota", Iota);
  t.emplace("broadcast", Broadcast);
  t.emplace("transpose", Transpose);
  t.emplace("bitcast", Bitcast);
  t.emplace("slice", Slice);
  t.emplace("concatenate", Concatenate);
  t.emplace("pad", Pad);
  t.emplace("reverse", Reverse);
  t.emplace("dynamic-slice", DynamicSlice);
  t.emplace("dynamic-update-slice", DynamicUpdateSlice);
  t.emplace("gather", Gather);
  t.emplace("compare", Compare);
  t.emplace("reduce-precision", ReducePrecision);
  t.emplace("add-dependency", PassThrough);
  t.emplace("domain", PassThrough);
}

}  // namespace tpusim::frontend

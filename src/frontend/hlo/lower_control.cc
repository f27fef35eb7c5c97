// Lowerings of control flow (while, conditional, call), fusion, custom-call,
// the optimization barrier, collectives and their async start/done pairs,
// and host transfers (infeed, outfeed, send, recv).
#include "frontend/hlo/lower.h"

namespace tpusim::frontend {
namespace {

using L = HloLowering;
using ir::Attribute;

// The tuple-shaped state of a while loop or barrier as its elements.
struct Split {
  std::vector<ir::Value> values;
  bool is_tuple = false;
};

Split SplitState(L& l, const HloInstruction& inst, const HloValue& v) {
  if (v.type.is_tuple()) return {l.Elements(inst, v), true};
  return {{l.Whole(inst, v)}, false};
}

HloValue Rejoin(const ir::Type& type, std::vector<ir::Value> values, bool is_tuple) {
  if (is_tuple) return HloValue{type, {}, std::move(values)};
  return HloValue::Whole(values[0]);
}

StatusOr<HloValue> While(L& l, const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(l.ExpectOperands(inst, 1));
  TPUSIM_ASSIGN_OR_RETURN(const HloComputation* cond, l.Called(inst, "condition"));
  TPUSIM_ASSIGN_OR_RETURN(const HloComputation* body, l.Called(inst, "body"));
  const HloValue& init = l.OperandValue(inst, 0);
  Split state = SplitState(l, inst, init);
  std::vector<ir::Type> types = ir::TypesOf(state.values);
  ir::Type state_type = init.type;
  bool is_tuple = state.is_tuple;
  // The HLO loop passes one (tuple) parameter; the regions get its elements.
  auto bind = [state_type, is_tuple](const std::vector<ir::Value>& args) {
    return std::vector<HloValue>{Rejoin(state_type, args, is_tuple)};
  };
  ir::Operation* op = l.Emit(inst, "stablehlo.while", state.values, types);
  TPUSIM_RETURN_IF_ERROR(l.LowerRegion(inst, *cond, &op->AddRegion(), types, bind, false));
  TPUSIM_RETURN_IF_ERROR(l.LowerRegion(inst, *body, &op->AddRegion(), types, bind, is_tuple));
  return Rejoin(inst.type, op->results(), is_tuple);
}

// `branch_computations={%a, %b}`.
StatusOr<std::vector<const HloComputation*>> Branches(L& l, const HloInstruction& inst) {
  std::vector<const HloComputation*> out;
  if (inst.Attr("true_computation") != nullptr) {
    TPUSIM_ASSIGN_OR_RETURN(const HloComputation* t, l.Called(inst, "true_computation"));
    TPUSIM_ASSIGN_OR_RETURN(const HloComputation* f, l.Called(inst, "false_computation"));
    return std::vector<const HloComputation*>{t, f};
  }
  const HloAttr* a = inst.Attr("branch_computations");
  if (a == nullptr) return l.Error(inst, "conditional needs branch_computations");
  HloCursor c = CursorOver(l.source(), a->value);
  TPUSIM_RETURN_IF_ERROR(c.Expect('{', "'{' opening branch_computations"));
  while (!c.Consume('}')) {
    if (!out.empty()) TPUSIM_RETURN_IF_ERROR(c.Expect(',', "',' or '}'"));
    c.SkipTrivia();
    size_t at = c.pos();
    TPUSIM_ASSIGN_OR_RETURN(const HloComputation* comp, l.Computation(c.ReadName(), at));
    out.push_back(comp);
  }
  return out;
}

StatusOr<HloValue> Conditional(L& l, const HloInstruction& inst) {
  TPUSIM_ASSIGN_OR_RETURN(std::vector<const HloComputation*> branches, Branches(l, inst));
  TPUSIM_RETURN_IF_ERROR(l.ExpectOperands(inst, 1 + static_cast<int>(branches.size())));
  bool is_if = inst.Attr("true_computation") != nullptr;
  ir::Operation* op = l.Emit(inst, is_if ? "stablehlo.if" : "stablehlo.case", {l.Operand(inst, 0)},
                             L::ResultTypes(inst, true));
  for (size_t b = 0; b < branches.size(); ++b) {
    // StableHLO branches take no arguments: each captures its operand.
    HloValue operand = l.OperandValue(inst, static_cast<int>(b) + 1);
    auto bind = [operand](const std::vector<ir::Value>&) { return std::vector<HloValue>{operand}; };
    TPUSIM_RETURN_IF_ERROR(
        l.LowerRegion(inst, *branches[b], &op->AddRegion(), {}, bind, inst.type.is_tuple()));
  }
  return l.ResultOf(inst, op);
}

StatusOr<HloValue> Call(L& l, const HloInstruction& inst) {
  TPUSIM_ASSIGN_OR_RETURN(const HloComputation* comp, l.Called(inst, "to_apply"));
  TPUSIM_ASSIGN_OR_RETURN(std::string name, l.FunctionFor(inst, *comp));
  const ir::Type& root = comp->instructions[comp->root].type;
  std::vector<ir::Type> results =
      root.is_tuple() ? root.tuple_elements() : std::vector<ir::Type>{root};
  ir::Operation* op = l.Emit(inst, "func.call", l.AllOperands(inst), results);
  op->attrs().Set("callee", Attribute::SymbolRef(name));
  return l.ResultOf(inst, op);
}

StatusOr<HloValue> Fusion(L& l, const HloInstruction& inst) {
  std::string_view kind = AttrWord(inst, "kind");
  if (kind != "kLoop" && kind != "kInput" && kind != "kOutput") {
    return l.Unsupported(inst, "fusion kind '" + std::string(kind) + "' is not supported");
  }
  TPUSIM_ASSIGN_OR_RETURN(const HloComputation* comp, l.Called(inst, "calls"));
  std::vector<ir::Value> operands = l.AllOperands(inst);
  ir::Operation* op = l.Emit(inst, "tpusim.fusion", operands, L::ResultTypes(inst, true));
  op->attrs().Set("kind", Attribute::String(std::string(kind)));
  op->attrs().Set("name", Attribute::String(std::string(inst.name)));
  TPUSIM_RETURN_IF_ERROR(
      l.LowerRegionWithArgs(inst, *comp, &op->AddRegion(), ir::TypesOf(operands), true));
  return l.ResultOf(inst, op);
}

StatusOr<HloValue> CustomCall(L& l, const HloInstruction& inst) {
  TPUSIM_ASSIGN_OR_RETURN(std::string target, AttrString(l, inst, "custom_call_target"));
  if (target.empty()) return l.Error(inst, "custom-call needs custom_call_target");
  ir::Operation* op =
      l.Emit(inst, "stablehlo.custom_call", l.AllOperands(inst), L::ResultTypes(inst, true));
  op->attrs().Set("call_target_name", Attribute::String(target));
  TPUSIM_ASSIGN_OR_RETURN(bool effects, AttrBoolOr(l, inst, "custom_call_has_side_effect", false));
  if (effects) op->attrs().Set("has_side_effect", Attribute::Bool(true));
  // JAX's sharding annotations are custom calls (target "Sharding").
  if (std::string_view s = AttrWord(inst, "sharding"); !s.empty()) {
    op->attrs().Set("mhlo.sharding", Attribute::String(std::string(s)));
  }
  // Kept as text, quoted or {dictionary}: foreign kernels read their settings from it.
  if (std::string_view config = AttrWord(inst, "backend_config"); config.starts_with("\"")) {
    TPUSIM_ASSIGN_OR_RETURN(std::string text, AttrString(l, inst, "backend_config"));
    op->attrs().Set("backend_config", Attribute::String(std::move(text)));
  } else if (config.starts_with("{")) {
    op->attrs().Set("backend_config", Attribute::String(std::string(config)));
  }
  return l.ResultOf(inst, op);
}

StatusOr<HloValue> OptimizationBarrier(L& l, const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(l.ExpectOperands(inst, 1));
  Split state = SplitState(l, inst, l.OperandValue(inst, 0));
  ir::Operation* op =
      l.Emit(inst, "stablehlo.optimization_barrier", state.values, ir::TypesOf(state.values));
  return Rejoin(inst.type, op->results(), state.is_tuple);
}

// ---- collectives ----

// The result of a collective: at an async `-start`, the shape of its
// `-done` (the start's own shape also holds buffers and contexts).
ir::Type CollectiveResult(const L& l, const HloInstruction& inst) {
  if (!inst.opcode.ends_with("-start")) return inst.type;
  if (const HloInstruction* done = l.DoneOf(inst)) return done->type;
  if (inst.type.is_tuple() && inst.type.tuple_elements().size() >= 2) {
    return inst.type.tuple_elements()[1];
  }
  return inst.type;
}

StatusOr<ir::Operation*> EmitCollective(L& l, const HloInstruction& inst, std::string_view name,
                                        bool with_groups) {
  ir::Type result = CollectiveResult(l, inst);
  std::vector<ir::Type> types =
      result.is_tuple() ? result.tuple_elements() : std::vector<ir::Type>{result};
  ir::Operation* op = l.Emit(inst, name, l.AllOperands(inst), types);
  if (with_groups) {
    TPUSIM_ASSIGN_OR_RETURN(auto groups, AttrGroups(l, inst, "replica_groups"));
    op->attrs().Set("replica_groups", I64Rows(groups));
  }
  TPUSIM_ASSIGN_OR_RETURN(Attribute channel, AttrChannelHandle(l, inst, 1));
  if (channel) op->attrs().Set("channel_handle", channel);
  TPUSIM_ASSIGN_OR_RETURN(bool global, AttrBoolOr(l, inst, "use_global_device_ids", false));
  if (global) op->attrs().Set("use_global_device_ids", Attribute::Unit());
  return op;
}

HloValue CollectiveValue(const ir::Type& result, ir::Operation* op) {
  if (result.is_tuple()) return HloValue{result, {}, op->results()};
  return HloValue::Whole(op->result(0));
}

StatusOr<HloValue> AllReduce(L& l, const HloInstruction& inst) {
  TPUSIM_ASSIGN_OR_RETURN(const HloComputation* comp, l.Called(inst, "to_apply"));
  TPUSIM_ASSIGN_OR_RETURN(ir::Operation * op,
                          EmitCollective(l, inst, "stablehlo.all_reduce", true));
  std::vector<ir::Type> args;
  for (int i : comp->parameters) args.push_back(comp->instructions[i].type);
  TPUSIM_RETURN_IF_ERROR(l.LowerRegionWithArgs(inst, *comp, &op->AddRegion(), args, true));
  return CollectiveValue(CollectiveResult(l, inst), op);
}

StatusOr<HloValue> ReduceScatter(L& l, const HloInstruction& inst) {
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> dims, AttrInts(l, inst, "dimensions"));
  if (dims.size() != 1) return l.Error(inst, "reduce-scatter takes one dimension");
  TPUSIM_ASSIGN_OR_RETURN(const HloComputation* comp, l.Called(inst, "to_apply"));
  TPUSIM_ASSIGN_OR_RETURN(ir::Operation * op,
                          EmitCollective(l, inst, "stablehlo.reduce_scatter", true));
  op->attrs().Set("scatter_dimension", I64(dims[0]));
  std::vector<ir::Type> args;
  for (int i : comp->parameters) args.push_back(comp->instructions[i].type);
  TPUSIM_RETURN_IF_ERROR(l.LowerRegionWithArgs(inst, *comp, &op->AddRegion(), args, true));
  return CollectiveValue(CollectiveResult(l, inst), op);
}

StatusOr<HloValue> AllGather(L& l, const HloInstruction& inst) {
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> dims, AttrInts(l, inst, "dimensions"));
  if (dims.size() != 1) return l.Error(inst, "all-gather takes one dimension");
  TPUSIM_ASSIGN_OR_RETURN(ir::Operation * op,
                          EmitCollective(l, inst, "stablehlo.all_gather", true));
  op->attrs().Set("all_gather_dim", I64(dims[0]));
  return CollectiveValue(CollectiveResult(l, inst), op);
}

StatusOr<HloValue> AllToAll(L& l, const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(l.ExpectOperands(inst, 1));
  if (inst.Attr("dimensions") == nullptr) {
    return l.Unsupported(inst, "all-to-all of tuples (without dimensions=) is not supported");
  }
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> dims, AttrInts(l, inst, "dimensions"));
  TPUSIM_ASSIGN_OR_RETURN(auto groups, AttrGroups(l, inst, "replica_groups"));
  if (dims.size() != 1 || groups.empty()) {
    return l.Unsupported(inst, "all-to-all needs one dimension and explicit replica_groups");
  }
  TPUSIM_ASSIGN_OR_RETURN(ir::Operation * op,
                          EmitCollective(l, inst, "stablehlo.all_to_all", true));
  op->attrs().Set("split_dimension", I64(dims[0]));
  op->attrs().Set("concat_dimension", I64(dims[0]));
  op->attrs().Set("split_count", I64(static_cast<int64_t>(groups[0].size())));
  return CollectiveValue(CollectiveResult(l, inst), op);
}

StatusOr<HloValue> CollectivePermute(L& l, const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(l.ExpectOperands(inst, 1));
  TPUSIM_ASSIGN_OR_RETURN(auto pairs, AttrGroups(l, inst, "source_target_pairs"));
  for (const auto& p : pairs) {
    if (p.size() != 2) return l.Error(inst, "source_target_pairs must be {source,target} pairs");
  }
  TPUSIM_ASSIGN_OR_RETURN(ir::Operation * op,
                          EmitCollective(l, inst, "stablehlo.collective_permute", false));
  op->attrs().Set("source_target_pairs", I64Rows(pairs));
  return CollectiveValue(CollectiveResult(l, inst), op);
}

StatusOr<HloValue> CollectiveBroadcast(L& l, const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(l.ExpectOperands(inst, 1));
  TPUSIM_ASSIGN_OR_RETURN(ir::Operation * op,
                          EmitCollective(l, inst, "stablehlo.collective_broadcast", true));
  return CollectiveValue(CollectiveResult(l, inst), op);
}

// copy-start/copy-done: the copy happens at the start.
StatusOr<HloValue> CopyStart(L& l, const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(l.ExpectOperands(inst, 1));
  ir::Operation* op =
      l.Emit(inst, "tpusim.copy", {l.Operand(inst, 0)}, {CollectiveResult(l, inst)});
  return HloValue::Whole(op->result(0));
}

// async-start(args), calls=%c: the wrapped computation runs at the start.
StatusOr<HloValue> AsyncStart(L& l, const HloInstruction& inst) {
  TPUSIM_ASSIGN_OR_RETURN(const HloComputation* comp, l.Called(inst, "calls"));
  std::vector<HloValue> params;
  for (size_t i = 0; i < inst.operands.size(); ++i) {
    params.push_back(l.OperandValue(inst, static_cast<int>(i)));
  }
  return l.Inline(inst, *comp, std::move(params));
}

// A `-done` or async-update: the value its start computed.
StatusOr<HloValue> Done(L& l, const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(l.ExpectOperands(inst, 1));
  const HloValue& v = l.OperandValue(inst, 0);
  if (v.type != inst.type && !inst.opcode.starts_with("async-update")) {
    return l.Error(inst, "shape " + inst.type.ToString() + " differs from its start's result " +
                             v.type.ToString());
  }
  return v;
}

// ---- host transfers ----

StatusOr<HloValue> Infeed(L& l, const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(l.ExpectOperands(inst, 1));
  const auto& shape = inst.type;
  if (!shape.is_tuple() || shape.tuple_elements().size() != 2) {
    return l.Error(inst, "infeed has the shape (data, token[])");
  }
  const ir::Type& data = shape.tuple_elements()[0];
  std::vector<ir::Type> types =
      data.is_tuple() ? data.tuple_elements() : std::vector<ir::Type>{data};
  types.push_back(ir::Type::Token());
  ir::Operation* op = l.Emit(inst, "stablehlo.infeed", {l.Operand(inst, 0)}, types);
  TPUSIM_ASSIGN_OR_RETURN(std::string config, AttrString(l, inst, "infeed_config"));
  op->attrs().Set("infeed_config", Attribute::String(std::move(config)));
  std::vector<ir::Value> results = op->results();
  ir::Value token = results.back();
  results.pop_back();
  HloValue data_value = data.is_tuple() ? HloValue{data, {}, results} : HloValue::Whole(results[0]);
  return HloValue{shape, {}, {l.Whole(inst, data_value), token}};
}

StatusOr<HloValue> Outfeed(L& l, const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(l.ExpectOperands(inst, 2));
  std::vector<ir::Value> operands = l.Flatten(inst, l.OperandValue(inst, 0));
  operands.push_back(l.Operand(inst, 1));
  ir::Operation* op = l.Emit(inst, "stablehlo.outfeed", operands, {ir::Type::Token()});
  TPUSIM_ASSIGN_OR_RETURN(std::string config, AttrString(l, inst, "outfeed_config"));
  op->attrs().Set("outfeed_config", Attribute::String(std::move(config)));
  return HloValue::Whole(op->result(0));
}

// XLA's device-to-device send and recv name their (source, target) pairs in
// a frontend attribute; StableHLO has them as source_target_pairs.
Status SetPairs(L& l, const HloInstruction& inst, ir::Operation* op) {
  TPUSIM_ASSIGN_OR_RETURN(auto pairs,
                          FrontendGroups(l, inst, "_xla_send_recv_source_target_pairs"));
  if (!pairs.empty()) op->attrs().Set("source_target_pairs", I64Rows(pairs));
  return Status::Ok();
}

// send and recv happen whole at the instruction; their -done yields the
// token (send) or the data and token (recv).
StatusOr<HloValue> Send(L& l, const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(l.ExpectOperands(inst, 2));
  TPUSIM_ASSIGN_OR_RETURN(bool host, AttrBoolOr(l, inst, "is_host_transfer", false));
  TPUSIM_ASSIGN_OR_RETURN(Attribute channel, AttrChannelHandle(l, inst, host ? 2 : 1));
  std::vector<ir::Value> operands = l.Flatten(inst, l.OperandValue(inst, 0));
  operands.push_back(l.Operand(inst, 1));
  ir::Operation* op = l.Emit(inst, "stablehlo.send", operands, {ir::Type::Token()});
  if (channel) op->attrs().Set("channel_handle", channel);
  op->attrs().Set("is_host_transfer", Attribute::Bool(host));
  TPUSIM_RETURN_IF_ERROR(SetPairs(l, inst, op));
  return HloValue::Whole(op->result(0));
}

StatusOr<HloValue> Recv(L& l, const HloInstruction& inst) {
  TPUSIM_RETURN_IF_ERROR(l.ExpectOperands(inst, 1));
  const auto& shape = inst.type;
  if (!shape.is_tuple() || shape.tuple_elements().size() != 3 ||
      !shape.tuple_elements()[0].is_tensor()) {
    return l.Unsupported(inst, "recv is supported for (array, u32[], token[]) shapes only");
  }
  TPUSIM_ASSIGN_OR_RETURN(bool host, AttrBoolOr(l, inst, "is_host_transfer", false));
  TPUSIM_ASSIGN_OR_RETURN(Attribute channel, AttrChannelHandle(l, inst, host ? 3 : 1));
  const ir::Type& data = shape.tuple_elements()[0];
  ir::Operation* op =
      l.Emit(inst, "stablehlo.recv", {l.Operand(inst, 0)}, {data, ir::Type::Token()});
  if (channel) op->attrs().Set("channel_handle", channel);
  op->attrs().Set("is_host_transfer", Attribute::Bool(host));
  TPUSIM_RETURN_IF_ERROR(SetPairs(l, inst, op));
  return HloValue{ir::Type::Tuple({data, ir::Type::Token()}), {}, op->results()};
}

}  // namespace

void AddControlLowerings(LowerTable& t) {
  t.emplace("while", While);
  t.emplace("conditional", Conditional);
  t.emplace("call", Call);
  t.emplace("fusion", Fusion);
  t.emplace("custom-call", CustomCall);
  t.emplace("opt-barrier", OptimizationBarrier);
  t.emplace("optimization-barrier", OptimizationBarrier);
  const std::pair<std::string_view, LowerFn> collectives[] = {
      {"all-reduce", AllReduce},
      {"all-reduce-start", AllReduce},
      {"all-gather", AllGather},
      {"all-gather-start", AllGather},
      {"reduce-scatter", ReduceScatter},
      {"all-to-all", AllToAll},
      {"collective-permute", CollectivePermute},
      {"collective-permute-start", CollectivePermute},
      {"collective-broadcast", CollectiveBroadcast},
  };
  for (const auto& [name, fn] : collectives) t.emplace(name, fn);
  t.emplace("copy-start", CopyStart);
  t.emplace("async-start", AsyncStart);
  for (std::string_view done :
       {"all-reduce-done", "all-gather-done", "reduce-scatter-done", "all-to-all-done",
        "collective-permute-done", "collective-broadcast-done", "copy-done", "async-done",
        "async-update", "send-done", "recv-done"}) {
    t.emplace(done, Done);
  }
  t.emplace("infeed", Infeed);
  t.emplace("outfeed", Outfeed);
  t.emplace("send", Send);
  t.emplace("recv", Recv);
}

}  // namespace tpusim::frontend

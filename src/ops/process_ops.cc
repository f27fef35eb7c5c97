// Ops that talk to the process's surroundings: its place in the grid
// (replica_id, partition_id), tokens (after_all, create_token), the infeed and
// outfeed streams, and point-to-point channels (send, recv).
#include "ops/custom_calls/host_callbacks.h"
#include "ops/util/op_util.h"
#include "ops/util/work_util.h"
#include "tpusim/ops/collectives.h"

namespace tpusim::ops {
namespace {

// Grid ids and tokens cost nothing. The streams are not priced; transfers
// with the host are priced on the chip's host link.
Work NoWork(const ir::Operation&) { return {.free = true}; }

const ir::Type kUi32Scalar = ir::Type::Tensor(ir::ElementType::kUI32, {});

Status VerifyGridId(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 0));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  return ExpectResultType(op, 0, kUi32Scalar);
}

StatusOr<std::vector<Tensor>> Ui32(int64_t v) {
  TPUSIM_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(kUi32Scalar));
  t.mutable_data<uint32_t>()[0] = static_cast<uint32_t>(v);
  return std::vector<Tensor>{std::move(t)};
}

StatusOr<std::vector<Tensor>> EvalReplicaId(EvalContext& ctx, const ir::Operation&,
                                            std::span<const Tensor>) {
  return Ui32(ctx.replica_id());
}

StatusOr<std::vector<Tensor>> EvalPartitionId(EvalContext& ctx, const ir::Operation&,
                                              std::span<const Tensor>) {
  return Ui32(ctx.partition_id());
}

TPUSIM_REGISTER_OP({.name = "stablehlo.replica_id",
                    .verify = VerifyGridId,
                    .eval = EvalReplicaId,
                    .work = NoWork});
TPUSIM_REGISTER_OP({.name = "stablehlo.partition_id",
                    .verify = VerifyGridId,
                    .eval = EvalPartitionId,
                    .work = NoWork});

// Tokens carry no data: ordering is already program order in this executor.
Status VerifyTokenOp(const ir::Operation& op) {
  for (int i = 0; i < op.num_operands(); ++i) {
    if (!op.operand(i).type().is_token()) {
      return InvalidArgument("'" + op.name_str() + "' operands must be tokens");
    }
  }
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  return ExpectResultType(op, 0, ir::Type::Token());
}

StatusOr<std::vector<Tensor>> EvalToken(EvalContext&, const ir::Operation&,
                                        std::span<const Tensor>) {
  return std::vector<Tensor>{Tensor::Token()};
}

TPUSIM_REGISTER_OP(
    {.name = "stablehlo.after_all", .verify = VerifyTokenOp, .eval = EvalToken, .work = NoWork});
TPUSIM_REGISTER_OP(
    {.name = "stablehlo.create_token", .verify = VerifyTokenOp, .eval = EvalToken, .work = NoWork});

// Ops whose last result is a token and whose other results are tensors
// (infeed, recv).
Status VerifyPayloadThenToken(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, 1));
  if (!op.operand(0).type().is_token()) {
    return InvalidArgument("'" + op.name_str() + "' operand must be a token");
  }
  if (op.num_results() < 1 || !op.result(op.num_results() - 1).type().is_token()) {
    return InvalidArgument("'" + op.name_str() + "' must end its results with a token");
  }
  for (int i = 0; i + 1 < op.num_results(); ++i) {
    if (!op.result(i).type().is_tensor()) {
      return InvalidArgument("'" + op.name_str() + "' payload results must be tensors");
    }
  }
  return Status::Ok();
}

// Checks that `payload` fits the op's payload results and appends the token.
StatusOr<std::vector<Tensor>> WithToken(const ir::Operation& op, std::vector<Tensor> payload) {
  if (static_cast<int>(payload.size()) != op.num_results() - 1) {
    return InvalidArgument("received " + std::to_string(payload.size()) + " values for " +
                           std::to_string(op.num_results() - 1) + " results");
  }
  for (size_t i = 0; i < payload.size(); ++i) {
    if (payload[i].type() != op.result(i).type()) {
      return InvalidArgument("received " + payload[i].type().ToString() + " for result " +
                             std::to_string(i) + " of type " + op.result(i).type().ToString());
    }
  }
  payload.push_back(Tensor::Token());
  return payload;
}

StatusOr<Collectives*> RequireGrid(EvalContext& ctx, const ir::Operation& op) {
  if (ctx.collectives() == nullptr) {
    return Unimplemented("'" + op.name_str() +
                         "' needs the streams of a process grid; run it under "
                         "interpreter.run_parallel");
  }
  return ctx.collectives();
}

StatusOr<std::vector<Tensor>> EvalInfeed(EvalContext& ctx, const ir::Operation& op,
                                         std::span<const Tensor>) {
  TPUSIM_ASSIGN_OR_RETURN(Collectives * grid, RequireGrid(ctx, op));
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> values, grid->PopInfeed());
  return WithToken(op, std::move(values));
}

TPUSIM_REGISTER_OP({.name = "stablehlo.infeed",
                    .verify = VerifyPayloadThenToken,
                    .eval = EvalInfeed,
                    .side_effects = true});

// Ops taking tensors then a token and returning a token (outfeed, send).
Status VerifyTensorsThenToken(const ir::Operation& op) {
  if (op.num_operands() < 1 || !op.operand(op.num_operands() - 1).type().is_token()) {
    return InvalidArgument("'" + op.name_str() + "' must end its operands with a token");
  }
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  return ExpectResultType(op, 0, ir::Type::Token());
}

std::vector<Tensor> Payload(std::span<const Tensor> operands) {
  return std::vector<Tensor>(operands.begin(), operands.end() - 1);
}

StatusOr<std::vector<Tensor>> EvalOutfeed(EvalContext& ctx, const ir::Operation& op,
                                          std::span<const Tensor> operands) {
  TPUSIM_ASSIGN_OR_RETURN(Collectives * grid, RequireGrid(ctx, op));
  grid->PushOutfeed(Payload(operands));
  return std::vector<Tensor>{Tensor::Token()};
}

TPUSIM_REGISTER_OP({.name = "stablehlo.outfeed",
                    .verify = VerifyTensorsThenToken,
                    .eval = EvalOutfeed,
                    .side_effects = true});

int64_t Channel(const ir::Operation& op) {
  ir::Attribute h = op.attr("channel_handle");
  ir::Attribute id = h.kind() == ir::Attribute::Kind::kStruct ? h.Get("handle") : h;
  return id.kind() == ir::Attribute::Kind::kInt ? id.int_value() : 0;
}

bool HostTransfer(const ir::Operation& op) {
  ir::Attribute a = op.attr("is_host_transfer");
  return a.kind() == ir::Attribute::Kind::kBool && a.bool_value();
}

// This process's partner in a device-to-device send/recv's
// source_target_pairs: its target (`as_source`) or its source; nullopt when
// the op names no pairs, -1 when this process is in none as that end.
StatusOr<std::optional<ProcessId>> Partner(EvalContext& ctx, const ir::Operation& op,
                                           bool as_source) {
  if (HostTransfer(op) || !op.attr("source_target_pairs")) return std::optional<ProcessId>();
  TPUSIM_ASSIGN_OR_RETURN(auto pairs,
                          CollectiveGroups(op, ctx.num_replicas(), ctx.num_partitions()));
  const ProcessId self = ctx.replica_id() * ctx.num_partitions() + ctx.partition_id();
  for (const auto& pair : pairs) {
    if (pair[as_source ? 0 : 1] == self) return std::optional<ProcessId>(pair[as_source ? 1 : 0]);
  }
  return std::optional<ProcessId>(-1);
}

// send/recv pair up by channel id. With source_target_pairs, a source's
// values go to its target, and a process that is no target receives zeros
// (as collective_permute's do); without, the n-th recv on a channel takes
// the n-th value sent on it. With is_host_transfer the other end is the
// host, which this executor models as the same channel queue.
StatusOr<std::vector<Tensor>> EvalSend(EvalContext& ctx, const ir::Operation& op,
                                       std::span<const Tensor> operands) {
  if (std::optional<std::string> callback = HostCallbackName(op); callback && HostTransfer(op)) {
    return Unimplemented(HostCallbackError("stablehlo.send to host callback '" + *callback + "'"));
  }
  TPUSIM_ASSIGN_OR_RETURN(Collectives * grid, RequireGrid(ctx, op));
  TPUSIM_ASSIGN_OR_RETURN(std::optional<ProcessId> target, Partner(ctx, op, true));
  if (!target || *target >= 0) {
    TPUSIM_RETURN_IF_ERROR(
        grid->Send(Channel(op), target ? *target : Collectives::kAnyProcess, Payload(operands)));
  }
  return std::vector<Tensor>{Tensor::Token()};
}

StatusOr<std::vector<Tensor>> EvalRecv(EvalContext& ctx, const ir::Operation& op,
                                       std::span<const Tensor>) {
  if (std::optional<std::string> callback = HostCallbackName(op); callback && HostTransfer(op)) {
    return Unimplemented(
        HostCallbackError("stablehlo.recv from host callback '" + *callback + "'"));
  }
  TPUSIM_ASSIGN_OR_RETURN(Collectives * grid, RequireGrid(ctx, op));
  TPUSIM_ASSIGN_OR_RETURN(std::optional<ProcessId> source, Partner(ctx, op, false));
  if (source && *source < 0) {
    TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> zeros, AllocateResults(op));
    zeros.back() = Tensor::Token();
    return zeros;
  }
  ProcessId self = ctx.replica_id() * ctx.num_partitions() + ctx.partition_id();
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> values,
                          grid->Recv(Channel(op), self, /*any=*/!source));
  return WithToken(op, std::move(values));
}

Status VerifyPairs(const ir::Operation& op) {
  if (!op.attr("source_target_pairs")) return Status::Ok();
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> flat, GetInts(op, "source_target_pairs"));
  ir::Attribute a = op.attr("source_target_pairs");
  const bool nx2 = a.kind() == ir::Attribute::Kind::kDenseElements && a.type().rank() == 2 &&
                   a.type().shape()[1] == 2;
  if (!nx2 && !flat.empty()) {
    return InvalidArgument("'" + op.name_str() + "' source_target_pairs must be Nx2");
  }
  return Status::Ok();
}

Status VerifySend(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(VerifyTensorsThenToken(op));
  return VerifyPairs(op);
}

Status VerifyRecv(const ir::Operation& op) {
  TPUSIM_RETURN_IF_ERROR(VerifyPayloadThenToken(op));
  return VerifyPairs(op);
}

// One transfer of the op's tensors over the host link.
Work HostTransferWork(const ir::Operation& op) {
  Work w;
  for (int i = 0; i < op.num_operands(); ++i) w.host_bytes += LogicalBytes(op.operand(i).type());
  for (int i = 0; i < op.num_results(); ++i) w.host_bytes += LogicalBytes(op.result(i).type());
  w.host_transfers = 1;
  return w;
}

// A send to another device reads its operands; the transfer is priced at
// the recv, whose results wait for it, as a collective_permute over the
// pairs; without pairs there is no route. Transfers with the host are
// priced on the host link.
Work SendWork(const ir::Operation& op) {
  if (HostTransfer(op)) return HostTransferWork(op);
  return ReadsAndWrites(op);
}

Work RecvWork(const ir::Operation& op) {
  if (HostTransfer(op)) return HostTransferWork(op);
  if (!op.attr("source_target_pairs")) return {.unpriced = true};
  int64_t bytes = 0;
  for (int i = 0; i + 1 < op.num_results(); ++i) bytes += LogicalBytes(op.result(i).type());
  Work w = ReadsAndWrites(op);
  w.collective = CollectiveWork{CollectiveKind::kPermute, bytes};
  return w;
}

TPUSIM_REGISTER_OP({.name = "stablehlo.send",
                    .verify = VerifySend,
                    .eval = EvalSend,
                    .work = SendWork,
                    .side_effects = true});
TPUSIM_REGISTER_OP({.name = "stablehlo.recv",
                    .verify = VerifyRecv,
                    .eval = EvalRecv,
                    .work = RecvWork,
                    .side_effects = true});

}  // namespace
}  // namespace tpusim::ops

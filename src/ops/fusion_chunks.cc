#include "ops/fusion_chunks.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <unordered_map>

#include "ops/kernels/chunk_kernels.h"
#include "ops/util/index_util.h"
#include "ops/util/op_util.h"
#include "ops/util/parallel.h"

namespace tpusim::ops {
namespace {

// Fusions whose results have fewer elements run their region op by op.
constexpr int64_t kMinElements = int64_t{1} << 16;
// Elements per chunk: a chunk of every value of a body fits in L2.
constexpr int64_t kChunk = 4096;

// A value of the body as the chunk loop reads it.
struct Value {
  enum class Kind {
    kWhole,      // all n elements in memory (a fusion operand, a constant): read in place
    kSplat,      // one element standing for all of them
    kComputed,   // written chunk by chunk by a step
    kBroadcast,  // a smaller tensor broadcast: copied into a slot chunk by chunk
    kSmall,      // fewer elements than the results: a whole tensor, computed first
  };
  Kind kind = Kind::kSmall;
  int width = 0;                  // storage bytes per element
  const uint8_t* data = nullptr;  // kWhole, kSplat, kBroadcast: the elements
  Tensor hold;                    // keeps `data` alive where a tensor owns it
  int slot = -1;                  // kComputed, kBroadcast: the chunk's storage
  int root = -1;                  // kComputed: the value its step writes (itself or,
                                  // for a reshape of it, the value reshaped)
  int arg = -1;                   // kWhole: the fusion operand it reads, if one
  std::vector<int64_t> shape;     // kBroadcast: the result's shape and, per
  std::vector<int64_t> strides;   // dimension, the source's stride (0: broadcast)
};

// An op run on each chunk by its kernel.
struct Step {
  const ir::Operation* op;
  const ChunkKernel* kernel;
  std::vector<int> in;  // value indices
  int out;
};

struct Plan {
  int64_t n = 0;  // elements of every result
  std::vector<Value> values;
  std::vector<Step> steps;
  std::vector<int> broadcasts;  // kBroadcast values steps or results read
  std::vector<int> results;     // value of each result
  std::vector<int> direct;      // per kComputed root: the result it is written into, or -1
  std::vector<int> slot_width;  // per slot: storage bytes per element
  std::vector<int> reuse;       // per result: the operand whose storage it takes, or -1
};

bool IsFull(const Value& v) { return v.kind != Value::Kind::kSmall; }

// Copies elements [begin, begin + count) of broadcast `v`, in row-major order
// of its shape, to `dst`: a run per row of the innermost dimension.
void BroadcastRange(const Value& v, int64_t begin, int64_t count, uint8_t* dst) {
  const size_t rank = v.shape.size();
  DispatchByWidth(v.width, [&]<typename T>() {
    std::array<int64_t, 16> index{};
    int64_t rest = begin, src = 0;
    for (size_t d = rank; d-- > 0;) {
      index[d] = rest % v.shape[d];
      rest /= v.shape[d];
      src += index[d] * v.strides[d];
    }
    const int64_t inner = v.shape[rank - 1], step = v.strides[rank - 1];
    int64_t done = 0;
    while (done < count) {
      const int64_t run = std::min(count - done, inner - index[rank - 1]);
      T x;
      if (step == 0) {
        std::memcpy(&x, v.data + src * sizeof(T), sizeof(T));
        for (int64_t i = 0; i < run; ++i) std::memcpy(dst + (done + i) * sizeof(T), &x, sizeof(T));
      } else {
        std::memcpy(dst + done * sizeof(T), v.data + src * sizeof(T), run * sizeof(T));
      }
      done += run;
      src += run * step;
      index[rank - 1] += run;
      for (size_t d = rank - 1; d > 0 && index[d] == v.shape[d]; --d) {
        src += v.strides[d - 1] - v.shape[d] * v.strides[d];
        index[d] = 0;
        ++index[d - 1];
      }
    }
  });
}

// A broadcast_in_dim of `source` (a value of the plan) to its result.
std::optional<Value> Broadcast(const ir::Operation& op, const Value& source) {
  const ir::Type& out = op.result(0).type();
  Value v;
  v.width = source.width;
  if (source.kind == Value::Kind::kSplat) {
    v.kind = Value::Kind::kSplat;
    v.data = source.data;
    return v;
  }
  if (source.kind != Value::Kind::kSmall) return std::nullopt;
  if (source.hold.num_elements() == 1) {
    v.kind = Value::Kind::kSplat;
    v.data = source.hold.raw();
    v.hold = source.hold;
    return v;
  }
  const std::vector<int64_t> dims = GetIntsOr(op, "broadcast_dimensions", {});
  const ir::Shape& in_shape = source.hold.shape();
  if (dims.size() != in_shape.size() || out.rank() == 0 || out.rank() > 16) return std::nullopt;
  const std::vector<int64_t> in_strides = RowMajorStrides(in_shape);
  v.kind = Value::Kind::kBroadcast;
  v.data = source.hold.raw();
  v.hold = source.hold;
  v.shape = out.shape();
  v.strides.assign(out.rank(), 0);
  for (size_t k = 0; k < dims.size(); ++k) {
    if (dims[k] < 0 || dims[k] >= out.rank()) return std::nullopt;
    if (in_shape[k] != 1) v.strides[dims[k]] = in_strides[k];
  }
  return v;
}

// Evaluates an op over small values whole, with its own evaluation.
StatusOr<Value> EvalSmall(EvalContext& ctx, const ir::Operation& op, const OpDef& def,
                          std::span<const Tensor> operands) {
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Tensor> results, def.eval(ctx, op, operands));
  if (results.size() != 1 || !results[0].valid() || !results[0].type().is_tensor()) {
    return Internal("'" + op.name_str() + "' in a fused loop gave no tensor");
  }
  Value v;
  v.width = ir::StorageBytes(results[0].element());
  v.hold = std::move(results[0]);
  return v;
}

// What to do with body op `op` (not the terminator): adds its value to the
// plan; false when it cannot run in chunks.
StatusOr<bool> AddOp(EvalContext& ctx, const ir::Operation& op, std::unordered_map<int, int>& index,
                     Plan& plan, int& slots) {
  if (op.num_results() != 1 || op.num_regions() != 0 || !op.result(0).type().is_tensor()) {
    return false;
  }
  const ir::Type& type = op.result(0).type();
  const int width = ir::StorageBytes(type.element());
  std::vector<int> in;
  for (ir::Value v : op.operands()) {
    auto it = index.find(v.id());
    if (it == index.end()) return false;
    in.push_back(it->second);
  }
  const std::string& name = op.name_str();
  auto add = [&](Value v) {
    index[op.result(0).id()] = static_cast<int>(plan.values.size());
    plan.values.push_back(std::move(v));
    return true;
  };
  if (type.num_elements() != plan.n) {
    // A smaller value: computed whole, from smaller values only.
    const OpDef* def = OpRegistry::Lookup(op.name());
    if (def == nullptr || !def->eval) return false;
    std::vector<Tensor> operands;
    for (int i : in) {
      if (plan.values[i].kind != Value::Kind::kSmall) return false;
      operands.push_back(plan.values[i].hold);
    }
    TPUSIM_ASSIGN_OR_RETURN(Value v, EvalSmall(ctx, op, *def, operands));
    return add(std::move(v));
  }
  if (name == "stablehlo.constant") {
    const ir::Attribute value = op.attr("value");
    if (value.kind() != ir::Attribute::Kind::kDenseElements) return false;
    Value v;
    v.width = width;
    v.data = value.bytes().data();  // the module owns the bytes
    if (value.is_splat()) {
      v.kind = Value::Kind::kSplat;
    } else if (static_cast<int64_t>(value.bytes().size()) == plan.n * width) {
      v.kind = Value::Kind::kWhole;
    } else {
      return false;
    }
    return add(std::move(v));
  }
  if (name == "stablehlo.reshape" && in.size() == 1 && IsFull(plan.values[in[0]])) {
    // The same elements in the same row-major order.
    Value alias = plan.values[in[0]];
    return add(std::move(alias));
  }
  if (name == "stablehlo.broadcast_in_dim" && in.size() == 1) {
    std::optional<Value> v = Broadcast(op, plan.values[in[0]]);
    if (!v) return false;
    if (v->kind == Value::Kind::kBroadcast) v->slot = slots++;
    return add(std::move(*v));
  }
  const ChunkKernel* kernel = FindChunkKernel(name);
  if (kernel == nullptr || !kernel->supports(op)) return false;
  for (int i : in) {
    const Value& v = plan.values[i];
    // A one-element smaller value is a scalar operand (select's predicate).
    if (v.kind == Value::Kind::kSmall && v.hold.num_elements() != 1) return false;
  }
  Value v;
  v.kind = Value::Kind::kComputed;
  v.width = width;
  v.slot = slots++;
  v.root = static_cast<int>(plan.values.size());
  plan.steps.push_back({&op, kernel, in, v.root});
  return add(std::move(v));
}

// The plan of `fusion` on `operands`; nullopt if it cannot run in chunks.
// Chooses, for each result written directly by a step, an operand whose
// storage it may take: one nothing else holds (`unique`), of the result's
// element type, that no later step reads and that is no result itself. Its
// chunk is then read before it is written, in every chunk.
void ChooseReuse(const ir::Operation& fusion, const std::vector<bool>& unique, Plan& plan) {
  const int args = static_cast<int>(unique.size());
  std::vector<int> last_read(args, -1);
  std::vector<bool> returned(args, false), taken(args, false);
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    for (int i : plan.steps[s].in) {
      if (plan.values[i].arg >= 0) last_read[plan.values[i].arg] = static_cast<int>(s);
    }
  }
  for (int i : plan.results) {
    if (plan.values[i].arg >= 0) returned[plan.values[i].arg] = true;
  }
  plan.reuse.assign(plan.results.size(), -1);
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const int r = plan.direct[plan.steps[s].out];
    if (r < 0) continue;
    const ir::Type& type = fusion.result(r).type();
    for (int a = 0; a < args; ++a) {
      const Value& v = plan.values[a];  // operand a is value a
      int reads = 0;                    // by this step: in place, an operand is read once
      for (int i : plan.steps[s].in) reads += plan.values[i].arg == a;
      if (unique[a] && !taken[a] && !returned[a] && reads <= 1 && v.kind == Value::Kind::kWhole &&
          last_read[a] <= static_cast<int>(s) && v.hold.element() == type.element()) {
        plan.reuse[r] = a;
        taken[a] = true;
        break;
      }
    }
  }
}

StatusOr<std::optional<Plan>> MakePlan(EvalContext& ctx, const ir::Operation& fusion,
                                       std::span<const Tensor> operands) {
  if (fusion.num_results() < 1 || !fusion.result(0).type().is_tensor()) return std::nullopt;
  Plan plan;
  plan.n = fusion.result(0).type().num_elements();
  if (plan.n < kMinElements) return std::nullopt;
  for (ir::Value r : fusion.results()) {
    if (!r.type().is_tensor() || r.type().num_elements() != plan.n) return std::nullopt;
  }
  const ir::Block& body = fusion.region(0).front();
  if (body.num_arguments() != static_cast<int>(operands.size())) return std::nullopt;
  std::unordered_map<int, int> index;  // value id -> plan value
  for (int i = 0; i < body.num_arguments(); ++i) {
    const Tensor& t = operands[i];
    if (!t.valid() || !t.type().is_tensor()) return std::nullopt;
    const int64_t n = body.argument(i).type().num_elements();
    Value v;
    v.width = ir::StorageBytes(t.element());
    v.hold = t;
    v.data = t.raw();
    if (IsSplatPlaceholder(t, n)) {
      if (n != plan.n) return std::nullopt;
      v.kind = Value::Kind::kSplat;
    } else if (t.num_elements() != n) {
      return std::nullopt;
    } else {
      v.kind = n == plan.n ? Value::Kind::kWhole : Value::Kind::kSmall;
      v.arg = i;
    }
    index[body.argument(i).id()] = static_cast<int>(plan.values.size());
    plan.values.push_back(std::move(v));
  }
  int slots = 0;
  const ir::Operation* terminator = body.terminator();
  if (terminator == nullptr || terminator->num_operands() != fusion.num_results()) {
    return std::nullopt;
  }
  for (const auto& op : body.ops()) {
    if (op.get() == terminator) break;
    TPUSIM_ASSIGN_OR_RETURN(bool ok, AddOp(ctx, *op, index, plan, slots));
    if (!ok) return std::nullopt;
  }
  plan.direct.assign(plan.values.size(), -1);
  for (int r = 0; r < terminator->num_operands(); ++r) {
    auto it = index.find(terminator->operand(r).id());
    if (it == index.end() || !IsFull(plan.values[it->second])) return std::nullopt;
    plan.results.push_back(it->second);
    const Value& v = plan.values[it->second];
    if (v.kind == Value::Kind::kComputed && plan.direct[v.root] < 0) plan.direct[v.root] = r;
  }
  // The broadcasts read by steps or results get filled each chunk.
  std::vector<bool> read(plan.values.size(), false);
  for (const Step& s : plan.steps) {
    for (int i : s.in) read[i] = true;
  }
  for (int i : plan.results) read[i] = true;
  plan.slot_width.assign(slots, 0);
  for (size_t i = 0; i < plan.values.size(); ++i) {
    const Value& v = plan.values[i];
    if (v.slot >= 0) plan.slot_width[v.slot] = v.width;
    if (v.kind == Value::Kind::kBroadcast && read[i]) {
      // Aliases (reshapes) share the slot: fill it once.
      bool seen = false;
      for (int b : plan.broadcasts) seen = seen || plan.values[b].slot == v.slot;
      if (!seen) plan.broadcasts.push_back(static_cast<int>(i));
    }
  }
  return std::optional<Plan>(std::move(plan));
}

// Runs chunks [first, last) of `plan`, writing `results`.
void RunChunks(const Plan& plan, std::vector<Tensor>& results, int64_t first, int64_t last) {
  std::vector<std::vector<uint64_t>> slots(plan.slot_width.size());
  for (size_t s = 0; s < slots.size(); ++s) {
    slots[s].resize((kChunk * plan.slot_width[s] + 7) / 8);
  }
  // Where value i's chunk at element b is.
  auto where = [&](int i, int64_t b) -> uint8_t* {
    const Value& v = plan.values[i];
    if (v.kind == Value::Kind::kComputed && plan.direct[v.root] >= 0) {
      return results[plan.direct[v.root]].mutable_raw() + b * v.width;
    }
    return reinterpret_cast<uint8_t*>(slots[v.slot].data());
  };
  std::vector<ChunkOperand> in;
  for (int64_t c = first; c < last; ++c) {
    const int64_t b = c * kChunk, n = std::min(kChunk, plan.n - b);
    for (int i : plan.broadcasts) BroadcastRange(plan.values[i], b, n, where(i, b));
    for (const Step& s : plan.steps) {
      in.clear();
      for (int i : s.in) {
        const Value& v = plan.values[i];
        switch (v.kind) {
          case Value::Kind::kWhole:
            in.push_back({v.data + b * v.width, false});
            break;
          case Value::Kind::kSplat:
            in.push_back({v.data, true});
            break;
          case Value::Kind::kSmall:
            in.push_back({v.hold.raw(), true});
            break;
          default:
            in.push_back({where(i, b), false});
            break;
        }
      }
      s.kernel->run(*s.op, in, where(s.out, b), n);
    }
    for (size_t r = 0; r < plan.results.size(); ++r) {
      const int i = plan.results[r];
      const Value& v = plan.values[i];
      if (v.kind == Value::Kind::kComputed && plan.direct[v.root] == static_cast<int>(r)) {
        continue;
      }
      uint8_t* out = results[r].mutable_raw() + b * v.width;
      if (v.kind == Value::Kind::kSplat) {
        for (int64_t k = 0; k < n; ++k) std::memcpy(out + k * v.width, v.data, v.width);
      } else {
        const uint8_t* src = v.kind == Value::Kind::kWhole ? v.data + b * v.width : where(i, b);
        std::memcpy(out, src, n * v.width);
      }
    }
  }
}

}  // namespace

std::optional<StatusOr<std::vector<Tensor>>> EvalLoopInChunks(EvalContext& ctx,
                                                              const ir::Operation& fusion,
                                                              std::vector<Tensor>& operands) {
  std::vector<bool> unique;
  for (const Tensor& t : operands) unique.push_back(t.unique_storage());
  StatusOr<std::optional<Plan>> plan = MakePlan(ctx, fusion, operands);
  if (!plan.ok()) return StatusOr<std::vector<Tensor>>(plan.status());
  if (!plan->has_value()) return std::nullopt;
  Plan& p = **plan;
  ChooseReuse(fusion, unique, p);
  std::vector<Tensor> results;
  for (int r = 0; r < fusion.num_results(); ++r) {
    const ir::Type& type = fusion.result(r).type();
    if (p.reuse[r] >= 0) {
      results.push_back(operands[p.reuse[r]].Reshaped(type.shape()));
      continue;
    }
    StatusOr<Tensor> t = Tensor::AllocateUninitialized(type);
    if (!t.ok()) return StatusOr<std::vector<Tensor>>(t.status());
    results.push_back(std::move(*t));
  }
  const int64_t chunks = (p.n + kChunk - 1) / kChunk;
  ParallelFor(chunks, std::max<int64_t>(1, kParallelElements / kChunk),
              [&](int64_t first, int64_t last) { RunChunks(p, results, first, last); });
  return StatusOr<std::vector<Tensor>>(std::move(results));
}

}  // namespace tpusim::ops

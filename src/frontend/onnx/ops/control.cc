// ONNX's control flow: If (stablehlo.if, or the taken branch alone when the
// condition is known at import), Loop and Scan (stablehlo.while). Their
// subgraphs are lowered into the regions, capturing the enclosing graphs'
// values. Loop-carried values keep their shapes; a Loop's scan outputs need
// a trip count known at import and a condition that cannot end the loop
// early, since they fix the outputs' shapes. Scan before opset 9 (a batch
// dimension) runs one loop per batch element.
#include <cstring>
#include <functional>
#include <limits>

#include "frontend/onnx/node.h"

namespace tpusim::frontend::onnx_import {
namespace {

using ir::ElementType;
using ir::Type;

Value ScalarOf(Builder& b, Value v) { return b.Reshape(v, {}); }

// The declared rank of subgraph input i: ONNX bodies take the iteration
// number and condition as scalars or as [1].
Shape DeclaredScalar(const onnx::GraphProto& g, int i) {
  const onnx::ValueInfoProto& v = g.input(i);
  if (v.type().tensor_type().has_shape() && v.type().tensor_type().shape().dim_size() == 1) {
    return {1};
  }
  return {};
}

// A value's tensors in order: itself, a sequence's elements, none for an
// absent optional. Sequences cross stablehlo.if as their elements.
void Flatten(const Lowered& l, std::vector<Value>* out) {
  if (l.sequence) {
    for (const Lowered& e : *l.sequence) out->push_back(e.value);
  } else if (!l.is_none) {
    out->push_back(l.value);
  }
}

// Whether `a` and `b` are both tensors, both absent, or sequences of one
// length.
bool SameKind(const Lowered& a, const Lowered& b) {
  if (a.sequence && b.sequence) return a.sequence->size() == b.sequence->size();
  return !a.sequence && !b.sequence && a.is_none == b.is_none;
}

// A value of `like`'s kind whose tensors are `values` from *next on.
Lowered Unflatten(const Lowered& like, const std::vector<Value>& values, size_t* next) {
  Lowered out;
  out.is_none = like.is_none;
  if (like.sequence) {
    out.sequence.emplace();
    for (size_t k = 0; k < like.sequence->size(); ++k) {
      out.sequence->push_back(Lowered{values[(*next)++], std::nullopt, ""});
    }
  } else if (!like.is_none) {
    out.value = values[(*next)++];
  }
  return out;
}

// Branches may yield sequences and optionals: both of the same kind (an
// optional present or absent in both, sequences of one length) when the
// condition is computed at run time.
Status If(Node& n) {
  const onnx::GraphProto* then_g = n.GraphAttr("then_branch");
  const onnx::GraphProto* else_g = n.GraphAttr("else_branch");
  if (then_g == nullptr || else_g == nullptr) return n.Invalid("needs both branches");
  Builder& b = n.b();
  if (n.IsKnown(0)) {
    TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> cond, n.KnownInts(0, "cond"));
    TPUSIM_ASSIGN_OR_RETURN(
        std::vector<Lowered> outs,
        n.LowerSubgraphLowered(cond.at(0) != 0 ? *then_g : *else_g, {}, b.block()));
    for (size_t i = 0; i < outs.size(); ++i) n.SetOutputLowered(static_cast<int>(i), outs[i]);
    return Status::Ok();
  }
  ir::Operation* op = b.Emit("stablehlo.if", {ScalarOf(b, n.input(0))}, {});
  std::vector<Type> types[2];
  std::vector<Lowered> kinds[2];
  const onnx::GraphProto* branches[2] = {then_g, else_g};
  for (int k = 0; k < 2; ++k) {
    ir::Block& block = op->AddRegion().AddBlock();
    TPUSIM_ASSIGN_OR_RETURN(kinds[k], n.LowerSubgraphLowered(*branches[k], {}, &block));
    std::vector<Value> outs;
    for (const Lowered& l : kinds[k]) Flatten(l, &outs);
    for (Value v : outs) types[k].push_back(v.type());
    Builder(&block).Emit("stablehlo.return", outs, {});
  }
  for (size_t i = 0; i < kinds[0].size() && i < kinds[1].size(); ++i) {
    if (!SameKind(kinds[0][i], kinds[1][i])) {
      return n.Unsupported("branches whose output " + std::to_string(i) +
                           " differs in kind or sequence length (" + kinds[0][i].KindName() +
                           " and " + kinds[1][i].KindName() + ")");
    }
  }
  if (types[0] != types[1]) {
    return n.Unsupported("branches whose outputs differ in shape or type (" +
                         ir::TypeListString(types[0]) + " and " + ir::TypeListString(types[1]) +
                         ")");
  }
  for (const Type& t : types[0]) op->AddResult(t);
  std::vector<Value> results;
  for (int i = 0; i < op->num_results(); ++i) results.push_back(op->result(i));
  size_t next = 0;
  for (size_t i = 0; i < kinds[0].size(); ++i) {
    n.SetOutputLowered(static_cast<int>(i), Unflatten(kinds[0][i], results, &next));
  }
  return Status::Ok();
}

// A stablehlo.while over `init`, its condition and body built by the
// callbacks from the carried values; returns the loop op.
ir::Operation* While(
    Builder& b, const std::vector<Value>& init,
    const std::function<Value(Builder&, const std::vector<Value>&)>& cond,
    const std::function<StatusOr<std::vector<Value>>(Builder&, const std::vector<Value>&)>& body,
    Status* status) {
  std::vector<Type> types;
  for (Value v : init) types.push_back(v.type());
  ir::Operation* loop = b.Emit("stablehlo.while", init, types);
  for (int k = 0; k < 2; ++k) {
    ir::Block& block = loop->AddRegion().AddBlock();
    std::vector<Value> args;
    for (const Type& t : types) args.push_back(block.AddArgument(t));
    Builder inner(&block);
    inner.set_location(b.location());
    if (k == 0) {
      inner.Emit("stablehlo.return", {cond(inner, args)}, {});
      continue;
    }
    StatusOr<std::vector<Value>> next = body(inner, args);
    if (!next.ok()) {
      *status = next.status();
      return loop;
    }
    inner.Emit("stablehlo.return", *next, {});
  }
  return loop;
}

// Iterations a Loop is unrolled to at most.
constexpr int64_t kMaxUnrolledTrips = 1024;

// A tensor known at import, of `shape`, all `v`.
Lowered KnownSplat(Builder& b, ElementType element, double v, const Shape& shape) {
  Tensor t = Tensor::Allocate(Type::Tensor(element, shape)).value();
  Value c = b.Splat(element, v, shape);
  if (element == ElementType::kI1) {
    std::memset(t.mutable_raw(), v != 0 ? 1 : 0, t.num_elements());
  } else {
    const int64_t i = static_cast<int64_t>(v);  // si64, the iteration number
    for (int64_t k = 0; k < t.num_elements(); ++k) std::memcpy(t.mutable_raw() + 8 * k, &i, 8);
  }
  return Lowered{c, t, ""};
}

// A Loop unrolled: a while loop cannot carry a sequence whose length may
// change per iteration, nor run a body that needs values known at import.
// The trip count and, after each iteration, the condition must be known at
// import; the body is lowered once per iteration with its iteration number
// known.
Status UnrolledLoop(Node& n, const onnx::GraphProto& body, int carried, int scans) {
  Builder& b = n.b();
  if (!n.has_input(0)) return n.Unsupported("a Loop carrying sequences without a trip count");
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> m,
                          n.KnownInts(0, "the trip count M of an unrolled Loop"));
  if (m.at(0) > kMaxUnrolledTrips) {
    return n.Unsupported("an unrolled Loop of more than " + std::to_string(kMaxUnrolledTrips) +
                         " iterations (it is unrolled)");
  }
  bool cond = true;
  if (n.has_input(1)) {
    TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> c,
                            n.KnownInts(1, "the condition of an unrolled Loop"));
    cond = c.at(0) != 0;
  }
  std::vector<Lowered> state;
  for (int i = 0; i < carried; ++i) state.push_back(n.lowered(2 + i));
  std::vector<std::vector<Value>> slices(scans);
  for (int64_t it = 0; it < m[0] && cond; ++it) {
    std::vector<Lowered> args = {
        KnownSplat(b, ElementType::kSI64, static_cast<double>(it), DeclaredScalar(body, 0)),
        KnownSplat(b, ElementType::kI1, 1, DeclaredScalar(body, 1))};
    args.insert(args.end(), state.begin(), state.end());
    TPUSIM_ASSIGN_OR_RETURN(std::vector<Lowered> outs,
                            n.LowerSubgraphLowered(body, args, b.block()));
    if (!outs[0].is_tensor() || !outs[0].known) {
      return n.Unsupported("an unrolled Loop whose body computes its condition at run time");
    }
    cond = outs[0].known->num_elements() > 0 && outs[0].known->raw()[0] != 0;
    state.assign(outs.begin() + 1, outs.begin() + 1 + carried);
    for (int s = 0; s < scans; ++s) {
      const Lowered& y = outs[1 + carried + s];
      if (!y.is_tensor()) return n.Unsupported("a Loop scan output that is not a tensor");
      Shape one = Builder::ShapeOf(y.value);
      one.insert(one.begin(), 1);
      if (!slices[s].empty() && Builder::ShapeOf(slices[s][0]) != one) {
        return n.Unsupported("a Loop scan output whose shape changes between iterations");
      }
      slices[s].push_back(b.Reshape(y.value, one));
    }
  }
  for (int i = 0; i < carried; ++i) n.SetOutputLowered(i, state[i]);
  for (int s = 0; s < scans; ++s) {
    if (slices[s].empty())
      return n.Unsupported("scan outputs of an unrolled Loop that runs no iteration");
    n.SetOutput(carried + s, b.Concat(slices[s], 0));
  }
  return Status::Ok();
}

// Loop-carried sequences and optionals, and bodies that need values known
// at import, unroll the loop (UnrolledLoop).
Status Loop(Node& n) {
  const onnx::GraphProto* body = n.GraphAttr("body");
  if (body == nullptr) return n.Invalid("needs a body");
  Builder& b = n.b();
  const int carried = n.num_inputs() - 2;
  const int scans = body->output_size() - 1 - carried;
  if (carried < 0 || scans < 0 || body->input_size() != carried + 2) {
    return n.Invalid("its body's inputs and outputs do not match its loop-carried values");
  }
  for (int i = 0; i < carried; ++i) {
    if (n.has_input(2 + i) && !n.lowered(2 + i).is_tensor()) {
      return UnrolledLoop(n, *body, carried, scans);
    }
  }
  constexpr double kForever = static_cast<double>(std::numeric_limits<int64_t>::max());
  Value trip = n.has_input(0) ? b.Convert(ScalarOf(b, n.input(0)), ElementType::kSI64)
                              : b.Scalar(ElementType::kSI64, kForever);
  Value cond0 = n.has_input(1) ? b.Convert(ScalarOf(b, n.input(1)), ElementType::kI1)
                               : b.Scalar(ElementType::kI1, 1);
  int64_t trips = -1;
  if (scans > 0) {
    TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> m, n.KnownInts(0, "the trip count M"));
    trips = m.at(0);
    const bool starts_true =
        !n.has_input(1) || (n.IsKnown(1) && n.KnownInts(1, "cond")->at(0) != 0);
    if (!starts_true)
      return n.Unsupported("scan outputs of a Loop whose condition may start false");
  }
  std::vector<Value> init = {b.Scalar(ElementType::kSI64, 0), cond0};
  for (int i = 0; i < carried; ++i) init.push_back(n.input(2 + i));
  const size_t first_scan = init.size();
  Status status;
  bool cond_passes_through = true;
  std::vector<Value> scan_slices;
  auto body_fn = [&](Builder& in, const std::vector<Value>& a) -> StatusOr<std::vector<Value>> {
    std::vector<Value> args = {in.Reshape(a[0], DeclaredScalar(*body, 0)),
                               in.Reshape(a[1], DeclaredScalar(*body, 1))};
    for (int i = 0; i < carried; ++i) args.push_back(a[2 + i]);
    TPUSIM_ASSIGN_OR_RETURN(std::vector<Value> outs, n.LowerSubgraph(*body, args, in.block()));
    cond_passes_through = outs[0] == args[1];
    std::vector<Value> next = {in.Add(a[0], in.Scalar(ElementType::kSI64, 1)),
                               in.Convert(ScalarOf(in, outs[0]), ElementType::kI1)};
    for (int i = 0; i < carried; ++i) {
      if (outs[1 + i].type() != a[2 + i].type()) {
        return n.Unsupported("a loop-carried value that changes from " +
                             a[2 + i].type().ToString() + " to " + outs[1 + i].type().ToString());
      }
      next.push_back(outs[1 + i]);
    }
    for (int s = 0; s < scans; ++s) {
      Value slice = outs[1 + carried + s];
      if (a.size() <= first_scan + s) {
        scan_slices.push_back(slice);  // first pass: the buffers' shapes
        continue;
      }
      Shape one = Builder::ShapeOf(slice);
      one.insert(one.begin(), 1);
      std::vector<Value> at = {a[0]};
      for (size_t d = 1; d < one.size(); ++d) at.push_back(in.Scalar(ElementType::kSI64, 0));
      next.push_back(in.DynamicUpdateSlice(a[first_scan + s], in.Reshape(slice, one), at));
    }
    return next;
  };
  auto cond_fn = [&](Builder& in, const std::vector<Value>& a) {
    return in.Binary("and", in.Compare("LT", a[0], trip), a[1]);
  };
  // The body lowered once into a scratch loop: the scan outputs' shapes
  // come from it (its values live as long as `scratch`). A body that needs
  // a value known at import (a Slice at the iteration number) cannot be a
  // while loop's; with the trip count and condition known, the Loop is
  // unrolled instead.
  ir::Block scratch(nullptr);
  {
    Builder probe(&scratch);
    probe.set_location(b.location());
    While(probe, init, cond_fn, body_fn, &status);
    if (status.code() == StatusCode::kUnimplemented && n.IsKnown(0) &&
        (!n.has_input(1) || n.IsKnown(1))) {
      return UnrolledLoop(n, *body, carried, scans);
    }
    TPUSIM_RETURN_IF_ERROR(status);
  }
  if (scans > 0) {
    if (!cond_passes_through) {
      return n.Unsupported("scan outputs of a Loop whose body computes its condition");
    }
    for (Value s : scan_slices) {
      Shape shape = Builder::ShapeOf(s);
      shape.insert(shape.begin(), trips);
      init.push_back(b.Splat(Builder::ElementOf(s), 0, shape));
    }
  }
  ir::Operation* loop = While(b, init, cond_fn, body_fn, &status);
  TPUSIM_RETURN_IF_ERROR(status);
  for (int i = 0; i < carried + scans; ++i) n.SetOutput(i, loop->result(2 + i));
  return Status::Ok();
}

// One Scan over `xs` (each scan input with its scan axis first, reversed
// when it runs backwards) from `states`: the final states and the scan
// outputs, stacked along a new first dimension in iteration order.
struct ScanResult {
  std::vector<Value> states, outs;
};

StatusOr<ScanResult> RunScan(Node& n, const onnx::GraphProto& body,
                             const std::vector<Value>& states, const std::vector<Value>& xs) {
  Builder& b = n.b();
  const int state = static_cast<int>(states.size());
  const int scan_out = body.output_size() - state;
  const int64_t steps = Builder::ShapeOf(xs.at(0))[0];
  std::vector<Value> init = {b.Scalar(ElementType::kSI64, 0)};
  init.insert(init.end(), states.begin(), states.end());
  const size_t first_out = init.size();
  std::vector<Value> slices;
  auto body_fn = [&](Builder& in, const std::vector<Value>& a) -> StatusOr<std::vector<Value>> {
    std::vector<Value> args(a.begin() + 1, a.begin() + 1 + state);
    for (Value x : xs) {
      Shape one = Builder::ShapeOf(x);
      one[0] = 1;
      std::vector<Value> at = {a[0]};
      for (size_t d = 1; d < one.size(); ++d) at.push_back(in.Scalar(ElementType::kSI64, 0));
      Shape slice(one.begin() + 1, one.end());
      args.push_back(in.Reshape(in.DynamicSlice(x, at, one), slice));
    }
    TPUSIM_ASSIGN_OR_RETURN(std::vector<Value> outs, n.LowerSubgraph(body, args, in.block()));
    std::vector<Value> next = {in.Add(a[0], in.Scalar(ElementType::kSI64, 1))};
    for (int i = 0; i < state; ++i) {
      if (outs[i].type() != a[1 + i].type()) return n.Unsupported("a state that changes shape");
      next.push_back(outs[i]);
    }
    for (int s = 0; s < scan_out; ++s) {
      Value slice = outs[state + s];
      if (a.size() <= first_out + s) {
        slices.push_back(slice);
        continue;
      }
      Shape one = Builder::ShapeOf(slice);
      one.insert(one.begin(), 1);
      std::vector<Value> at = {a[0]};
      for (size_t d = 1; d < one.size(); ++d) at.push_back(in.Scalar(ElementType::kSI64, 0));
      next.push_back(in.DynamicUpdateSlice(a[first_out + s], in.Reshape(slice, one), at));
    }
    return next;
  };
  auto cond_fn = [&](Builder& in, const std::vector<Value>& a) {
    return in.Compare("LT", a[0], in.Scalar(ElementType::kSI64, static_cast<double>(steps)));
  };
  Status status;
  if (scan_out > 0) {
    // The scan outputs' shapes come from the body: lowered once into a
    // scratch loop to learn them.
    ir::Block scratch(nullptr);
    Builder probe(&scratch);
    probe.set_location(b.location());
    While(probe, init, cond_fn, body_fn, &status);
    TPUSIM_RETURN_IF_ERROR(status);
    for (Value s : slices) {
      Shape shape = Builder::ShapeOf(s);
      shape.insert(shape.begin(), steps);
      init.push_back(b.Splat(Builder::ElementOf(s), 0, shape));
    }
  }
  ir::Operation* loop = While(b, init, cond_fn, body_fn, &status);
  TPUSIM_RETURN_IF_ERROR(status);
  ScanResult r;
  for (int i = 0; i < state; ++i) r.states.push_back(loop->result(1 + i));
  for (int s = 0; s < scan_out; ++s)
    r.outs.push_back(loop->result(static_cast<int>(first_out) + s));
  return r;
}

// Opset 8: every input and output has a leading batch dimension, the scan
// axis is 1, and `directions` reverses scan inputs only. Each batch element
// runs its own loop. sequence_lens must be absent or all the full length:
// shorter sequences would pad the outputs per element.
Status Scan8(Node& n, const onnx::GraphProto& body) {
  Builder& b = n.b();
  const int num_scan_in = static_cast<int>(n.Int("num_scan_inputs", 0));
  const int state = n.num_inputs() - 1 - num_scan_in;
  if (state < 0 || num_scan_in < 1 || body.output_size() < state ||
      body.input_size() != state + num_scan_in) {
    return n.Invalid("its body does not match its state and scan inputs");
  }
  const std::vector<int64_t> dirs = n.Ints("directions", std::vector<int64_t>(num_scan_in, 0));
  const Shape first = Builder::ShapeOf(n.input(1 + state));
  if (first.size() < 2) return n.Invalid("scan inputs need batch and sequence dimensions");
  const int64_t batch = first[0], steps = first[1];
  for (int i = 1; i < n.num_inputs(); ++i) {
    const Shape& s = Builder::ShapeOf(n.input(i));
    if (s.empty() || s[0] != batch || (i > state && (s.size() < 2 || s[1] != steps))) {
      return n.Invalid("inputs differ in batch size or sequence length");
    }
  }
  if (n.has_input(0)) {
    TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> lens, n.KnownInts(0, "sequence_lens"));
    for (int64_t len : lens) {
      if (len != steps) return n.Unsupported("sequence_lens shorter than the sequence");
    }
  }
  // Batch element k of input i, without the batch dimension.
  auto row = [&](int i, int64_t k) {
    Value x = n.input(i);
    Shape s = Builder::ShapeOf(x);
    s.erase(s.begin());
    return b.Reshape(b.SliceDim(x, 0, k, k + 1), s);
  };
  std::vector<std::vector<Value>> outs(body.output_size());
  for (int64_t k = 0; k < batch; ++k) {
    std::vector<Value> states, xs;
    for (int i = 0; i < state; ++i) states.push_back(row(1 + i, k));
    for (int i = 0; i < num_scan_in; ++i) {
      Value x = row(1 + state + i, k);
      xs.push_back(dirs.at(i) != 0 ? b.Reverse(x, {0}) : x);
    }
    TPUSIM_ASSIGN_OR_RETURN(ScanResult r, RunScan(n, body, states, xs));
    r.states.insert(r.states.end(), r.outs.begin(), r.outs.end());
    for (size_t o = 0; o < r.states.size(); ++o) {
      Shape one = Builder::ShapeOf(r.states[o]);
      one.insert(one.begin(), 1);
      outs[o].push_back(b.Reshape(r.states[o], one));
    }
  }
  for (size_t o = 0; o < outs.size(); ++o) n.SetOutput(static_cast<int>(o), b.Concat(outs[o], 0));
  return Status::Ok();
}

// Opset 9 on: no batch dimension; scan axes and directions per scan input
// and output.
Status Scan(Node& n) {
  const onnx::GraphProto* body = n.GraphAttr("body");
  if (body == nullptr) return n.Invalid("needs a body");
  if (n.opset() < 9) return Scan8(n, *body);
  Builder& b = n.b();
  const int num_scan_in = static_cast<int>(n.Int("num_scan_inputs", 0));
  const int state = n.num_inputs() - num_scan_in;
  const int scan_out = body->output_size() - state;
  if (state < 0 || scan_out < 0 || body->input_size() != n.num_inputs()) {
    return n.Invalid("its body does not match its state and scan inputs");
  }
  const std::vector<int64_t> in_axes =
      n.Ints("scan_input_axes", std::vector<int64_t>(num_scan_in, 0));
  const std::vector<int64_t> in_dirs =
      n.Ints("scan_input_directions", std::vector<int64_t>(num_scan_in, 0));
  const std::vector<int64_t> out_axes =
      n.Ints("scan_output_axes", std::vector<int64_t>(scan_out, 0));
  const std::vector<int64_t> out_dirs =
      n.Ints("scan_output_directions", std::vector<int64_t>(scan_out, 0));
  // Each scan input with its scan axis first, reversed when it runs backwards.
  std::vector<Value> xs;
  int64_t steps = -1;
  for (int i = 0; i < num_scan_in; ++i) {
    Value x = n.input(state + i);
    TPUSIM_ASSIGN_OR_RETURN(int64_t axis, n.Axis(in_axes.at(i), Builder::RankOf(x)));
    std::vector<int64_t> perm = {axis};
    for (int64_t d = 0; d < Builder::RankOf(x); ++d) {
      if (d != axis) perm.push_back(d);
    }
    x = b.Transpose(x, perm);
    if (in_dirs.at(i) != 0) x = b.Reverse(x, {0});
    if (steps >= 0 && Builder::ShapeOf(x)[0] != steps)
      return n.Invalid("scan inputs differ in length");
    steps = Builder::ShapeOf(x)[0];
    xs.push_back(x);
  }
  if (steps < 0) return n.Invalid("needs a scan input");
  std::vector<Value> states;
  for (int i = 0; i < state; ++i) states.push_back(n.input(i));
  TPUSIM_ASSIGN_OR_RETURN(ScanResult r, RunScan(n, *body, states, xs));
  for (int i = 0; i < state; ++i) n.SetOutput(i, r.states[i]);
  for (int s = 0; s < scan_out; ++s) {
    Value y = r.outs[s];
    if (out_dirs.at(s) != 0) y = b.Reverse(y, {0});
    TPUSIM_ASSIGN_OR_RETURN(int64_t axis, n.Axis(out_axes.at(s), Builder::RankOf(y)));
    // The scan axis from first to `axis`.
    std::vector<int64_t> perm;
    for (int64_t d = 1; d <= axis; ++d) perm.push_back(d);
    perm.push_back(0);
    for (int64_t d = axis + 1; d < Builder::RankOf(y); ++d) perm.push_back(d);
    n.SetOutput(state + s, b.Transpose(y, perm));
  }
  return Status::Ok();
}

TPUSIM_REGISTER_ONNX_OP({"If", If});
TPUSIM_REGISTER_ONNX_OP({"Loop", Loop, "", /*takes_sequences=*/true});
TPUSIM_REGISTER_ONNX_OP({"Scan", Scan});

}  // namespace
}  // namespace tpusim::frontend::onnx_import

// ONNX's recurrent layers LSTM, GRU and RNN (opsets 1, 3/7 and 14: the
// attributes of 14; output_sequence of opset 1 only made Y optional, which
// unwanted outputs already are). As XLA compiles a recurrent layer:
//  - the input projection X·W^T (+ the biases that do not depend on the state)
//    of every time step and direction is one dot_general before the loop;
//  - the time loop is one stablehlo.while over the steps (not unrolled, so a
//    long sequence stays a small program), both directions of a
//    bidirectional layer advancing together: at step s the forward direction
//    reads time s and the reverse direction time T-1-s (dynamic_slice), the
//    state's matmul H·R^T is one dot_general batched over the directions,
//    and Y is written in place (dynamic_update_slice);
//  - the weights and projections are captured by the loop's body (tpusim's
//    verifier and interpreter allow it), not carried.
// Defaults: direction forward; activations LSTM (Sigmoid, Tanh, Tanh), GRU
// (Sigmoid, Tanh), RNN (Tanh), one list for both directions when only one
// direction's is given; layout 0; absent B, initial_h, initial_c and P are
// zeros; hidden_size, when absent, is R's last dimension.
// activation_alpha/beta are consumed in order by the activations that take
// them (Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu), as
// onnxruntime does; a missing one is the ONNX op's default (LeakyRelu 0.01,
// ThresholdedRelu 1, HardSigmoid 0.2/0.5, Elu 1; Affine 1/0 and ScaledTanh
// 1/1, those of the retired experimental ops). ThresholdedRelu keeps x >= alpha,
// as these ops' doc writes it. Refused: an activation outside the doc's list.
// clip bounds the gates' pre-activations (the inputs of f and g), as
// onnxruntime does; the cell state fed to h is not clipped.
// sequence_lens: step t of batch b is past its sequence when t >= lens[b]
// (compared at run time, so the lengths need not be known at import): its Y
// is 0 and its state keeps its last value, so Y_h/Y_c are the state after
// the last valid step; the reverse direction, stepping from T-1 down, starts
// at the sequence's own last element. The lengths are read by the program,
// never folded at import, even when known (they do not change shapes).
// Computation is in X's element type (float16, float, double).
#include <cctype>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "frontend/onnx/node.h"

namespace tpusim::frontend::onnx_import {
namespace {

using ir::ElementType;
using ir::Type;

constexpr ElementType kIndex = ElementType::kSI32;

// One activation function with its alpha and beta.
struct Activation {
  std::string name;  // lower-case
  double alpha = 0, beta = 0;
  bool operator==(const Activation&) const = default;
};

// The settings common to the three ops, read and checked from the node.
struct Layer {
  int64_t gates = 1;     // gate blocks in W and R: LSTM 4, GRU 3, RNN 1
  int64_t dirs = 1;      // num_directions
  bool reverse = false;  // direction "reverse" (one direction, time reversed)
  int64_t layout = 0;
  int64_t seq = 0, batch = 0, input = 0, hidden = 0;
  std::optional<double> clip;
  std::vector<std::vector<Activation>> acts;  // [direction][function]
  ElementType element = ElementType::kF32;

  bool Reversed(int64_t d) const { return reverse || d == 1; }
};

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Whether `name` takes alpha and beta, and their defaults; false if unknown.
bool ActivationParams(const std::string& name, bool* alpha, bool* beta, double* da, double* db) {
  struct Entry {
    const char* name;
    bool alpha, beta;
    double da, db;
  };
  static const Entry kTable[] = {
      {"relu", false, false, 0, 0},        {"tanh", false, false, 0, 0},
      {"sigmoid", false, false, 0, 0},     {"softsign", false, false, 0, 0},
      {"softplus", false, false, 0, 0},    {"affine", true, true, 1, 0},
      {"leakyrelu", true, false, 0.01, 0}, {"thresholdedrelu", true, false, 1, 0},
      {"scaledtanh", true, true, 1, 1},    {"hardsigmoid", true, true, 0.2, 0.5},
      {"elu", true, false, 1, 0}};
  for (const Entry& e : kTable) {
    if (name == e.name) {
      *alpha = e.alpha, *beta = e.beta, *da = e.da, *db = e.db;
      return true;
    }
  }
  return false;
}

// activations with their alpha/beta, per direction; `defaults` is one
// direction's list.
Status ReadActivations(const Node& n, const std::vector<std::string>& defaults, Layer& l) {
  const int64_t per = static_cast<int64_t>(defaults.size());
  std::vector<std::string> names = defaults;
  if (const onnx::AttributeProto* a = n.Attr("activations")) {
    names.assign(a->strings().begin(), a->strings().end());
  }
  const int64_t count = static_cast<int64_t>(names.size());
  if (count != per && count != per * l.dirs) {
    return n.Invalid("activations has " + std::to_string(count) + " functions, expected " +
                     std::to_string(per) + (l.dirs == 2 ? " or " + std::to_string(2 * per) : ""));
  }
  const std::vector<float> alphas = n.Floats("activation_alpha"),
                           betas = n.Floats("activation_beta");
  size_t next_alpha = 0, next_beta = 0;
  std::vector<Activation> all;
  for (const std::string& raw : names) {
    Activation act{Lower(raw)};
    bool takes_alpha, takes_beta;
    if (!ActivationParams(act.name, &takes_alpha, &takes_beta, &act.alpha, &act.beta)) {
      return n.Unsupported("activation '" + raw + "'");
    }
    if (takes_alpha && next_alpha < alphas.size()) act.alpha = alphas[next_alpha++];
    if (takes_beta && next_beta < betas.size()) act.beta = betas[next_beta++];
    all.push_back(act);
  }
  l.acts.clear();
  for (int64_t d = 0; d < l.dirs; ++d) {
    const int64_t from = count == per ? 0 : d * per;
    l.acts.emplace_back(all.begin() + from, all.begin() + from + per);
  }
  return Status::Ok();
}

// The activation function `a` of x, elementwise.
Value ApplyOne(Builder& b, const Activation& a, Value x) {
  auto full = [&](double v) { return b.FullLike(x, v); };
  const std::string& f = a.name;
  if (f == "sigmoid") return b.Unary("logistic", x);
  if (f == "tanh") return b.Unary("tanh", x);
  if (f == "relu") return b.Max(x, full(0));
  if (f == "affine") return b.Add(b.Mul(full(a.alpha), x), full(a.beta));
  if (f == "leakyrelu") {
    return b.Select(b.Compare("GE", x, full(0)), x, b.Mul(full(a.alpha), x));
  }
  if (f == "thresholdedrelu") return b.Select(b.Compare("GE", x, full(a.alpha)), x, full(0));
  if (f == "scaledtanh") return b.Mul(full(a.alpha), b.Unary("tanh", b.Mul(full(a.beta), x)));
  if (f == "hardsigmoid") {
    return b.Clamp(b.ScalarLike(x, 0), b.Add(b.Mul(full(a.alpha), x), full(a.beta)),
                   b.ScalarLike(x, 1));
  }
  if (f == "elu") {
    return b.Select(b.Compare("GE", x, full(0)), x,
                    b.Mul(full(a.alpha), b.Unary("exponential_minus_one", x)));
  }
  if (f == "softsign") return b.Div(x, b.Add(full(1), b.Unary("abs", x)));
  // softplus: log(1 + e^x) as log1p(e^-|x|) + max(x, 0), which does not overflow.
  Value t = b.Unary("log_plus_one", b.Unary("exponential", b.Unary("negate", b.Unary("abs", x))));
  return b.Add(t, b.Max(x, full(0)));
}

// Function k of each direction on x [dirs, batch, hidden]; `clipped`: its
// input bounded by clip first.
Value Activate(Builder& b, const Layer& l, int k, Value x, bool clipped = true) {
  if (clipped && l.clip) x = b.Clamp(b.ScalarLike(x, -*l.clip), x, b.ScalarLike(x, *l.clip));
  if (l.dirs == 1 || l.acts[0][k] == l.acts[1][k]) return ApplyOne(b, l.acts[0][k], x);
  std::vector<Value> parts;
  for (int64_t d = 0; d < l.dirs; ++d) {
    parts.push_back(ApplyOne(b, l.acts[d][k], b.SliceDim(x, 0, d, d + 1)));
  }
  return b.Concat(parts, 0);
}

// Gate block `g` (of `l.hidden` columns) of x [..., gates * hidden].
Value Gate(Builder& b, const Layer& l, Value x, int64_t g) {
  const int64_t last = Builder::RankOf(x) - 1;
  return b.SliceDim(x, last, g * l.hidden, (g + 1) * l.hidden);
}

// x [dirs, batch, k] times m [dirs, n, k] transposed: [dirs, batch, n].
Value BatchedMatmul(Builder& b, Value x, Value m) {
  return b.DotGeneral(x, m, {0}, {0}, {2}, {2}, Builder::ElementOf(x));
}

// A per-direction vector v [dirs, hidden] as [dirs, batch, hidden].
Value PerDirection(Builder& b, const Layer& l, Value v) {
  return b.BroadcastInDim(v, {l.dirs, l.batch, l.hidden}, {0, 2});
}

enum class Kind { kLstm, kGru, kRnn };

// Reads and checks the shapes and attributes of X (0), W (1), R (2).
StatusOr<Layer> ReadLayer(const Node& n, Kind kind) {
  Layer l;
  l.gates = kind == Kind::kLstm ? 4 : kind == Kind::kGru ? 3 : 1;
  const Value x = n.input(0), w = n.input(1), r = n.input(2);
  if (Builder::RankOf(x) != 3 || Builder::RankOf(w) != 3 || Builder::RankOf(r) != 3) {
    return n.Invalid("X, W and R must be 3-D");
  }
  l.element = Builder::ElementOf(x);
  if (!ir::IsFloat(l.element)) return n.Invalid("X must be a floating-point tensor");
  const std::string direction = n.String("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional") {
    return n.Invalid("direction '" + direction + "'");
  }
  l.dirs = direction == "bidirectional" ? 2 : 1;
  l.reverse = direction == "reverse";
  l.layout = n.Int("layout", 0);
  if (l.layout != 0 && l.layout != 1) return n.Invalid("layout must be 0 or 1");
  const Shape& xs = Builder::ShapeOf(x);
  l.seq = xs[l.layout == 0 ? 0 : 1];
  l.batch = xs[l.layout == 0 ? 1 : 0];
  l.input = xs[2];
  l.hidden = n.Int("hidden_size", Builder::ShapeOf(r)[2]);
  if (l.hidden < 1) return n.Invalid("hidden_size must be positive");
  if (n.has_attr("clip")) l.clip = n.Float("clip", 0.0f);
  const int64_t rows = l.gates * l.hidden;
  if (Builder::ShapeOf(w) != Shape{l.dirs, rows, l.input}) {
    return n.Invalid("W is " + w.type().ToString() + ", expected [" + std::to_string(l.dirs) +
                     ", " + std::to_string(rows) + ", " + std::to_string(l.input) + "]");
  }
  if (Builder::ShapeOf(r) != Shape{l.dirs, rows, l.hidden}) {
    return n.Invalid("R is " + r.type().ToString() + ", expected [" + std::to_string(l.dirs) +
                     ", " + std::to_string(rows) + ", " + std::to_string(l.hidden) + "]");
  }
  const std::vector<std::string> defaults =
      kind == Kind::kLstm  ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
      : kind == Kind::kGru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                           : std::vector<std::string>{"Tanh"};
  TPUSIM_RETURN_IF_ERROR(ReadActivations(n, defaults, l));
  return l;
}

// Optional input i, of `shape` when present; null when absent.
StatusOr<Value> OptionalInput(const Node& n, int i, const Shape& shape, std::string_view what) {
  if (!n.has_input(i)) return Value();
  Value v = n.input(i);
  if (Builder::ShapeOf(v) != shape) {
    return n.Invalid(std::string(what) + " has the wrong shape " + v.type().ToString());
  }
  return v;
}

// The inputs the step reads, prepared before the loop (captured by it).
struct Prepared {
  Value xw;               // X·W^T + biases: [T, B, dirs, G*H] (layout 1: [B, T, ...])
  Value r;                // R [dirs, G*H, H]
  Value r_zr, r_h, rb_h;  // GRU: R's z and r rows, its h rows; Rbh as [dirs, B, H] or null
  Value p_i, p_o, p_f;    // LSTM peepholes as [dirs, B, H]; null without P
  Value lens;             // sequence_lens as si32 [B]; null without it
};

StatusOr<Prepared> Prepare(Node& n, Kind kind, const Layer& l, bool linear_before_reset) {
  Builder& b = n.b();
  Prepared p;
  const int64_t rows = l.gates * l.hidden;
  // One matmul for every step and direction: [T, B, I] x [dirs, G*H, I].
  p.xw = b.DotGeneral(n.input(0), n.input(1), {}, {}, {2}, {2}, l.element);
  TPUSIM_ASSIGN_OR_RETURN(Value bias, OptionalInput(n, 3, {l.dirs, 2 * rows}, "B"));
  if (bias) {
    Value wb = b.SliceDim(bias, 1, 0, rows), rb = b.SliceDim(bias, 1, rows, 2 * rows);
    if (kind == Kind::kGru && linear_before_reset) {
      // Rbh is inside the reset gate's product: added in the loop.
      p.rb_h = PerDirection(b, l, b.SliceDim(rb, 1, 2 * l.hidden, rows));
      Value zeros = b.Splat(l.element, 0, {l.dirs, l.hidden});
      rb = b.Concat({b.SliceDim(rb, 1, 0, 2 * l.hidden), zeros}, 1);
    }
    p.xw = b.Add(p.xw, b.BroadcastInDim(b.Add(wb, rb), Builder::ShapeOf(p.xw), {2, 3}));
  }
  p.r = n.input(2);
  if (kind == Kind::kGru && !linear_before_reset) {
    p.r_zr = b.SliceDim(p.r, 1, 0, 2 * l.hidden);
    p.r_h = b.SliceDim(p.r, 1, 2 * l.hidden, rows);
  }
  if (kind == Kind::kLstm) {
    TPUSIM_ASSIGN_OR_RETURN(Value peep, OptionalInput(n, 7, {l.dirs, 3 * l.hidden}, "P"));
    if (peep) {
      p.p_i = PerDirection(b, l, b.SliceDim(peep, 1, 0, l.hidden));
      p.p_o = PerDirection(b, l, b.SliceDim(peep, 1, l.hidden, 2 * l.hidden));
      p.p_f = PerDirection(b, l, b.SliceDim(peep, 1, 2 * l.hidden, 3 * l.hidden));
    }
  }
  TPUSIM_ASSIGN_OR_RETURN(Value lens, OptionalInput(n, 4, {l.batch}, "sequence_lens"));
  if (lens) {
    if (!ir::IsInteger(Builder::ElementOf(lens)))
      return n.Invalid("sequence_lens must be integers");
    p.lens = b.Convert(lens, kIndex);
  }
  return p;
}

// The loop's state: H and C (LSTM) [dirs, B, H]; Y [T, dirs, B, H] when wanted.
struct State {
  Value h, c, y;
};

// One step of a cell: the new h (and c) from the step's projected input gx
// [dirs, B, G*H] and the previous state.
using Cell = std::function<State(Builder& b, Value gx, const State& prev)>;

State LstmStep(Builder& b, const Layer& l, const Prepared& p, bool input_forget, Value gx,
               const State& prev) {
  Value g = b.Add(gx, BatchedMatmul(b, prev.h, p.r));
  // Gate blocks in ONNX's order i, o, f, c.
  Value gi = Gate(b, l, g, 0), go = Gate(b, l, g, 1), gf = Gate(b, l, g, 2), gc = Gate(b, l, g, 3);
  if (p.p_i) {
    gi = b.Add(gi, b.Mul(p.p_i, prev.c));
    gf = b.Add(gf, b.Mul(p.p_f, prev.c));
  }
  Value i = Activate(b, l, 0, gi);
  // input_forget couples the gates: f = 1 - i.
  Value f = input_forget ? b.Sub(b.FullLike(i, 1), i) : Activate(b, l, 0, gf);
  Value c = b.Add(b.Mul(f, prev.c), b.Mul(i, Activate(b, l, 1, gc)));
  if (p.p_o) go = b.Add(go, b.Mul(p.p_o, c));
  Value o = Activate(b, l, 0, go);
  return State{b.Mul(o, Activate(b, l, 2, c, /*clipped=*/false)), c, Value()};
}

State GruStep(Builder& b, const Layer& l, const Prepared& p, bool linear_before_reset, Value gx,
              const State& prev) {
  // Gate blocks in ONNX's order z, r, h.
  Value gh = BatchedMatmul(b, prev.h, linear_before_reset ? p.r : p.r_zr);
  Value zr = b.Add(b.SliceDim(gx, 2, 0, 2 * l.hidden), b.SliceDim(gh, 2, 0, 2 * l.hidden));
  Value z = Activate(b, l, 0, Gate(b, l, zr, 0));
  Value r = Activate(b, l, 0, Gate(b, l, zr, 1));
  Value recurrent;
  if (linear_before_reset) {
    Value h_lin = Gate(b, l, gh, 2);
    if (p.rb_h) h_lin = b.Add(h_lin, p.rb_h);
    recurrent = b.Mul(r, h_lin);
  } else {
    recurrent = BatchedMatmul(b, b.Mul(r, prev.h), p.r_h);
  }
  Value hh = Activate(b, l, 1, b.Add(Gate(b, l, gx, 2), recurrent));
  Value h = b.Add(b.Mul(b.Sub(b.FullLike(z, 1), z), hh), b.Mul(z, prev.h));
  return State{h, Value(), Value()};
}

State RnnStep(Builder& b, const Layer& l, const Prepared& p, Value gx, const State& prev) {
  return State{Activate(b, l, 0, b.Add(gx, BatchedMatmul(b, prev.h, p.r))), Value(), Value()};
}

// The time each direction reads at loop step s: s, or T-1-s reversed.
std::vector<Value> TimeIndices(Builder& b, const Layer& l, Value s) {
  std::vector<Value> t;
  for (int64_t d = 0; d < l.dirs; ++d) {
    t.push_back(l.Reversed(d) ? b.Sub(b.Scalar(kIndex, l.seq - 1), s) : s);
  }
  return t;
}

// The step's rows of xw, [dirs, B, G*H].
Value StepInput(Builder& b, const Layer& l, Value xw, const std::vector<Value>& t) {
  Value zero = b.Scalar(kIndex, 0);
  const int64_t rows = l.gates * l.hidden;
  std::vector<Value> parts;
  for (int64_t d = 0; d < l.dirs; ++d) {
    std::vector<Value> starts = {zero, zero, b.Scalar(kIndex, static_cast<double>(d)), zero};
    std::vector<int64_t> sizes = {1, l.batch, 1, rows};
    if (l.layout == 1) sizes = {l.batch, 1, 1, rows};
    starts[l.layout == 0 ? 0 : 1] = t[d];
    parts.push_back(b.Reshape(b.DynamicSlice(xw, starts, sizes), {1, l.batch, rows}));
  }
  return b.Concat(parts, 0);
}

// Whether each direction's step is inside each sequence: [dirs, B, H] i1.
Value Valid(Builder& b, const Layer& l, Value lens, const std::vector<Value>& t) {
  std::vector<Value> ts;
  for (Value v : t) ts.push_back(b.Reshape(v, {1}));
  Value time = b.BroadcastInDim(b.Concat(ts, 0), {l.dirs, l.batch}, {0});
  Value inside = b.Compare("LT", time, b.BroadcastInDim(lens, {l.dirs, l.batch}, {1}));
  return b.BroadcastInDim(inside, {l.dirs, l.batch, l.hidden}, {0, 1});
}

// Y with out [dirs, B, H] written at each direction's time.
Value WriteStep(Builder& b, const Layer& l, Value y, Value out, const std::vector<Value>& t) {
  Value zero = b.Scalar(kIndex, 0);
  for (int64_t d = 0; d < l.dirs; ++d) {
    Value update = b.Reshape(b.SliceDim(out, 0, d, d + 1), {1, 1, l.batch, l.hidden});
    y = b.DynamicUpdateSlice(y, update,
                             {t[d], b.Scalar(kIndex, static_cast<double>(d)), zero, zero});
  }
  return y;
}

// The while loop over the time steps; its results as a State.
State Loop(Builder& b, const Layer& l, const Prepared& p, const State& init, const Cell& cell) {
  std::vector<Value> operands = {b.Scalar(kIndex, 0), init.h};
  if (init.c) operands.push_back(init.c);
  if (init.y) operands.push_back(init.y);
  const std::vector<Type> types = ir::TypesOf(operands);
  auto unpack = [&](const std::vector<Value>& v) {
    State s{v[1], Value(), Value()};
    size_t k = 2;
    if (init.c) s.c = v[k++];
    if (init.y) s.y = v[k++];
    return s;
  };
  ir::Operation* loop = b.Emit("stablehlo.while", operands, types);
  b.AddRegion(loop, types, [&](const std::vector<Value>& a) {
    return std::vector<Value>{b.Compare("LT", a[0], b.Scalar(kIndex, static_cast<double>(l.seq)))};
  });
  b.AddRegion(loop, types, [&](const std::vector<Value>& a) {
    const State prev = unpack(a);
    const std::vector<Value> t = TimeIndices(b, l, a[0]);
    State next = cell(b, StepInput(b, l, p.xw, t), prev);
    Value out = next.h;
    if (p.lens) {
      // Past its sequence, a batch row's state holds and its output is 0.
      Value valid = Valid(b, l, p.lens, t);
      next.h = b.Select(valid, next.h, prev.h);
      if (prev.c) next.c = b.Select(valid, next.c, prev.c);
      out = b.Select(valid, out, b.FullLike(out, 0));
    }
    std::vector<Value> results = {b.Add(a[0], b.Scalar(kIndex, 1)), next.h};
    if (prev.c) results.push_back(next.c);
    if (prev.y) results.push_back(WriteStep(b, l, prev.y, out, t));
    return results;
  });
  std::vector<Value> r;
  for (int i = 0; i < loop->num_results(); ++i) r.push_back(loop->result(i));
  return unpack(r);
}

// initial_h (5) or initial_c (6) as [dirs, B, H]: zeros when absent.
StatusOr<Value> InitialState(Node& n, const Layer& l, int i, std::string_view what) {
  Builder& b = n.b();
  const Shape shape =
      l.layout == 0 ? Shape{l.dirs, l.batch, l.hidden} : Shape{l.batch, l.dirs, l.hidden};
  TPUSIM_ASSIGN_OR_RETURN(Value v, OptionalInput(n, i, shape, what));
  if (!v) return b.BroadcastInDim(b.Scalar(l.element, 0), {l.dirs, l.batch, l.hidden}, {});
  return l.layout == 0 ? v : b.Transpose(v, {1, 0, 2});
}

Status Recurrent(Node& n, Kind kind) {
  Builder& b = n.b();
  TPUSIM_ASSIGN_OR_RETURN(Layer l, ReadLayer(n, kind));
  const bool input_forget = kind == Kind::kLstm && n.Int("input_forget", 0) != 0;
  const bool linear_before_reset = kind == Kind::kGru && n.Int("linear_before_reset", 0) != 0;
  TPUSIM_ASSIGN_OR_RETURN(Prepared p, Prepare(n, kind, l, linear_before_reset));
  State state;
  TPUSIM_ASSIGN_OR_RETURN(state.h, InitialState(n, l, 5, "initial_h"));
  if (kind == Kind::kLstm) {
    TPUSIM_ASSIGN_OR_RETURN(state.c, InitialState(n, l, 6, "initial_c"));
  }
  if (n.wants_output(0)) {
    // A broadcast, not a constant: the loop updates it in place.
    state.y = b.BroadcastInDim(b.Scalar(l.element, 0), {l.seq, l.dirs, l.batch, l.hidden}, {});
  }
  Cell cell = [&](Builder& bb, Value gx, const State& prev) {
    if (kind == Kind::kLstm) return LstmStep(bb, l, p, input_forget, gx, prev);
    if (kind == Kind::kGru) return GruStep(bb, l, p, linear_before_reset, gx, prev);
    return RnnStep(bb, l, p, gx, prev);
  };
  if (l.seq > 0) state = Loop(b, l, p, state, cell);
  const bool batch_first = l.layout == 1;
  if (state.y) n.SetOutput(0, batch_first ? b.Transpose(state.y, {2, 0, 1, 3}) : state.y);
  n.SetOutput(1, batch_first ? b.Transpose(state.h, {1, 0, 2}) : state.h);
  if (state.c) n.SetOutput(2, batch_first ? b.Transpose(state.c, {1, 0, 2}) : state.c);
  return Status::Ok();
}

}  // namespace

TPUSIM_REGISTER_ONNX_OP({"LSTM", [](Node& n) { return Recurrent(n, Kind::kLstm); }});
TPUSIM_REGISTER_ONNX_OP({"GRU", [](Node& n) { return Recurrent(n, Kind::kGru); }});
TPUSIM_REGISTER_ONNX_OP({"RNN", [](Node& n) { return Recurrent(n, Kind::kRnn); }});

}  // namespace tpusim::frontend::onnx_import

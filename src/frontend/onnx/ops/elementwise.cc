// ONNX's elementwise ops: math, activations, comparisons, logic, Cast,
// Clip and Where. Binary and variadic ops broadcast by numpy's rule
// (ONNX's "multidirectional" broadcasting, opset 7 on); the opset 6 `axis`
// broadcast attribute is refused.
#include <algorithm>
#include <cmath>
#include <limits>

#include "frontend/onnx/node.h"
#include "frontend/onnx/tensor_proto.h"

namespace tpusim::frontend::onnx_import {
namespace {

using ir::ElementType;

Status Unary(Node& n, std::string_view op) {
  n.SetOutput(0, n.b().Unary(op, n.input(0)));
  return Status::Ok();
}

// ONNX's numpy broadcast of operands a and b, or an error naming the shapes.
StatusOr<Shape> Broadcast(const Node& n, Value a, Value b) {
  Shape out;
  if (!BroadcastShapes(Builder::ShapeOf(a), Builder::ShapeOf(b), &out)) {
    return n.Invalid("shapes " + a.type().ToString() + " and " + b.type().ToString() +
                     " do not broadcast");
  }
  return out;
}

// Opsets 1 to 6 broadcast B to A only when `broadcast` is 1: B's
// dimensions are A's from `axis` on, or A's last ones without it.
Value LegacyBroadcast(const Node& n, Value a, Value b, Builder& bld) {
  if (n.Int("broadcast", 0) == 0 || Builder::ShapeOf(a) == Builder::ShapeOf(b)) return b;
  const int64_t ra = Builder::RankOf(a), rb = Builder::RankOf(b);
  const int64_t axis =
      n.has_attr("axis") ? (n.Int("axis", 0) + ra) % std::max<int64_t>(ra, 1) : ra - rb;
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < rb; ++i) dims.push_back(axis + i);
  return bld.BroadcastInDim(b, Builder::ShapeOf(a), dims);
}

Status Binary(Node& n, std::string_view op) {
  Value a = n.input(0), b = n.input(1);
  if (n.opset() < 7) b = LegacyBroadcast(n, a, b, n.b());
  TPUSIM_RETURN_IF_ERROR(Broadcast(n, a, b).status());
  if (Builder::ElementOf(a) != Builder::ElementOf(b)) {
    return n.Invalid("operands of different types " + a.type().ToString() + " and " +
                     b.type().ToString());
  }
  n.SetOutput(0, n.b().BinaryBroadcast(op, a, b));
  return Status::Ok();
}

// Max, Min, Sum, Mean: any number of inputs, broadcast together.
Status Variadic(Node& n, std::string_view op, bool mean = false) {
  Value acc = n.input(0);
  for (int i = 1; i < n.num_inputs(); ++i) {
    TPUSIM_RETURN_IF_ERROR(Broadcast(n, acc, n.input(i)).status());
    acc = n.b().BinaryBroadcast(op, acc, n.input(i));
  }
  if (mean) acc = n.b().Div(acc, n.b().FullLike(acc, n.num_inputs()));
  n.SetOutput(0, acc);
  return Status::Ok();
}

Status Compare(Node& n, std::string_view direction) {
  TPUSIM_RETURN_IF_ERROR(Broadcast(n, n.input(0), n.input(1)).status());
  n.SetOutput(0, n.b().Compare(direction, n.input(0), n.input(1)));
  return Status::Ok();
}

// x where x > 0, else `negative(x)`.
Status Piecewise(Node& n, const std::function<Value(Builder&, Value)>& negative) {
  Builder& b = n.b();
  Value x = n.input(0);
  Value positive = b.Compare("GT", x, b.ScalarLike(x, 0));
  n.SetOutput(0, b.Select(positive, x, negative(b, x)));
  return Status::Ok();
}

Status Relu(Node& n) {
  Value x = n.input(0);
  n.SetOutput(0, n.b().Max(x, n.b().FullLike(x, 0)));
  return Status::Ok();
}

Status LeakyRelu(Node& n) {
  const double alpha = n.Float("alpha", 0.01f);
  return Piecewise(n, [&](Builder& b, Value x) { return b.Mul(x, b.FullLike(x, alpha)); });
}

Status Elu(Node& n) {
  const double alpha = n.Float("alpha", 1.0f);
  return Piecewise(n, [&](Builder& b, Value x) {
    return b.Mul(b.FullLike(x, alpha), b.Unary("exponential_minus_one", x));
  });
}

Status Celu(Node& n) {
  // max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
  const double alpha = n.Float("alpha", 1.0f);
  Builder& b = n.b();
  Value x = n.input(0);
  Value e =
      b.Mul(b.FullLike(x, alpha), b.Unary("exponential_minus_one", b.Div(x, b.FullLike(x, alpha))));
  n.SetOutput(0, b.Add(b.Max(x, b.FullLike(x, 0)), b.Min(e, b.FullLike(x, 0))));
  return Status::Ok();
}

Status Selu(Node& n) {
  const double alpha = n.Float("alpha", 1.67326319217681884765625f);
  const double gamma = n.Float("gamma", 1.05070102214813232421875f);
  Builder& b = n.b();
  Value x = n.input(0);
  Value neg = b.Mul(b.FullLike(x, alpha), b.Unary("exponential_minus_one", x));
  Value positive = b.Compare("GT", x, b.ScalarLike(x, 0));
  n.SetOutput(0, b.Mul(b.FullLike(x, gamma), b.Select(positive, x, neg)));
  return Status::Ok();
}

Status ThresholdedRelu(Node& n) {
  const double alpha = n.Float("alpha", 1.0f);
  Builder& b = n.b();
  Value x = n.input(0);
  n.SetOutput(0, b.Select(b.Compare("GT", x, b.ScalarLike(x, alpha)), x, b.FullLike(x, 0)));
  return Status::Ok();
}

// max(0, min(1, alpha * x + beta))
Value HardSigmoidOf(Builder& b, Value x, double alpha, double beta) {
  Value y = b.Add(b.Mul(x, b.FullLike(x, alpha)), b.FullLike(x, beta));
  return b.Clamp(b.ScalarLike(x, 0), y, b.ScalarLike(x, 1));
}

Status HardSigmoid(Node& n) {
  n.SetOutput(0, HardSigmoidOf(n.b(), n.input(0), n.Float("alpha", 0.2f), n.Float("beta", 0.5f)));
  return Status::Ok();
}

Status HardSwish(Node& n) {
  Value x = n.input(0);
  n.SetOutput(0, n.b().Mul(x, HardSigmoidOf(n.b(), x, 1.0 / 6, 0.5)));
  return Status::Ok();
}

Status Softplus(Node& n) {
  // log(1 + exp(x)), as log1p(exp(-|x|)) + max(x, 0) so that it does not overflow.
  Builder& b = n.b();
  Value x = n.input(0);
  Value t = b.Unary("log_plus_one", b.Unary("exponential", b.Unary("negate", b.Unary("abs", x))));
  n.SetOutput(0, b.Add(t, b.Max(x, b.FullLike(x, 0))));
  return Status::Ok();
}

Status Softsign(Node& n) {
  Builder& b = n.b();
  Value x = n.input(0);
  n.SetOutput(0, b.Div(x, b.Add(b.FullLike(x, 1), b.Unary("abs", x))));
  return Status::Ok();
}

Status Shrink(Node& n) {
  const double lambd = n.Float("lambd", 0.5f), bias = n.Float("bias", 0.0f);
  Builder& b = n.b();
  Value x = n.input(0);
  Value below = b.Compare("LT", x, b.ScalarLike(x, -lambd));
  Value above = b.Compare("GT", x, b.ScalarLike(x, lambd));
  Value zero = b.FullLike(x, 0);
  Value y = b.Select(below, b.Add(x, b.FullLike(x, bias)), zero);
  n.SetOutput(0, b.Select(above, b.Sub(x, b.FullLike(x, bias)), y));
  return Status::Ok();
}

Status Reciprocal(Node& n) {
  Value x = n.input(0);
  n.SetOutput(0, n.b().Div(n.b().FullLike(x, 1), x));
  return Status::Ok();
}

Status Pow(Node& n) {
  Value x = n.input(0), y = n.input(1);
  TPUSIM_RETURN_IF_ERROR(Broadcast(n, x, y).status());
  // The exponent takes the base's type (opset 12 allows them to differ).
  y = n.b().Convert(y, Builder::ElementOf(x));
  n.SetOutput(0, n.b().BinaryBroadcast("power", x, y));
  return Status::Ok();
}

Status Mod(Node& n) {
  Builder& b = n.b();
  Value x = n.input(0), y = n.input(1);
  TPUSIM_ASSIGN_OR_RETURN(Shape shape, Broadcast(n, x, y));
  x = b.BroadcastTo(x, shape);
  y = b.BroadcastTo(y, shape);
  Value r = b.Binary("remainder", x, y);  // the sign of x, as C's fmod
  const bool fmod = n.Int("fmod", 0) != 0;
  if (!fmod && ir::IsFloat(Builder::ElementOf(x))) {
    return n.Unsupported("Mod of floats with fmod = 0");  // the checker refuses it too
  }
  if (!fmod && !ir::IsUnsignedInt(Builder::ElementOf(x))) {
    // Python's %: the sign of y. Add y where r is non-zero and the signs differ.
    Value zero = b.FullLike(r, 0);
    Value nonzero = b.Compare("NE", r, zero);
    Value differ = b.Compare("NE", b.Compare("LT", r, zero), b.Compare("LT", y, zero));
    r = b.Select(b.Binary("and", nonzero, differ), b.Add(r, y), r);
  }
  n.SetOutput(0, r);
  return Status::Ok();
}

Status BitShift(Node& n) {
  const std::string direction = n.String("direction", "");
  if (direction != "LEFT" && direction != "RIGHT")
    return n.Invalid("direction must be LEFT or RIGHT");
  return Binary(n, direction == "LEFT" ? "shift_left" : "shift_right_logical");
}

Status Not(Node& n) { return Unary(n, "not"); }

Status IsNaN(Node& n) {
  Value x = n.input(0);
  n.SetOutput(0, n.b().Compare("NE", x, x));
  return Status::Ok();
}

Status IsInf(Node& n) {
  Builder& b = n.b();
  Value x = n.input(0);
  const bool pos = n.Int("detect_positive", 1) != 0, neg = n.Int("detect_negative", 1) != 0;
  const double inf = std::numeric_limits<double>::infinity();
  Value p = b.Compare("EQ", x, b.ScalarLike(x, inf));
  Value m = b.Compare("EQ", x, b.ScalarLike(x, -inf));
  Value none = b.Splat(ElementType::kI1, 0, Builder::ShapeOf(x));
  n.SetOutput(0, pos && neg ? b.Binary("or", p, m) : pos ? p : neg ? m : none);
  return Status::Ok();
}

Status Sign(Node& n) {
  Value x = n.input(0);
  if (!ir::IsInteger(Builder::ElementOf(x))) return Unary(n, "sign");
  Builder& b = n.b();
  Value zero = b.FullLike(x, 0);
  Value pos = b.Select(b.Compare("GT", x, zero), b.FullLike(x, 1), zero);
  n.SetOutput(0, ir::IsUnsignedInt(Builder::ElementOf(x))
                     ? pos
                     : b.Select(b.Compare("LT", x, zero), b.FullLike(x, -1), pos));
  return Status::Ok();
}

Status Cast(Node& n) {
  TPUSIM_ASSIGN_OR_RETURN(ElementType to, ElementOfOnnx(static_cast<int32_t>(n.Int("to", 0))));
  Builder& b = n.b();
  Value x = n.input(0);
  if (ir::IsBool(to) && !ir::IsBool(Builder::ElementOf(x))) {
    n.SetOutput(0, b.Compare("NE", x, b.ScalarLike(x, 0)));  // non-zero is true
    return Status::Ok();
  }
  n.SetOutput(0, b.Convert(x, to));
  return Status::Ok();
}

Status CastLike(Node& n) {
  Builder& b = n.b();
  Value x = n.input(0);
  const ElementType to = Builder::ElementOf(n.input(1));
  n.SetOutput(0, ir::IsBool(to) && !ir::IsBool(Builder::ElementOf(x))
                     ? b.Compare("NE", x, b.ScalarLike(x, 0))
                     : b.Convert(x, to));
  return Status::Ok();
}

Status Clip(Node& n) {
  Builder& b = n.b();
  Value x = n.input(0);
  Value y = x;
  if (n.opset() < 11) {
    const double lo = n.Float("min", -std::numeric_limits<float>::max());
    const double hi = n.Float("max", std::numeric_limits<float>::max());
    y = b.Max(y, b.FullLike(x, lo));
    y = b.Min(y, b.FullLike(x, hi));
  } else {
    // min then max, each optional: max(min(x, hi), lo) as numpy.clip.
    if (n.has_input(1)) y = b.Max(y, b.BroadcastTo(n.input(1), Builder::ShapeOf(x)));
    if (n.has_input(2)) y = b.Min(y, b.BroadcastTo(n.input(2), Builder::ShapeOf(x)));
  }
  n.SetOutput(0, y);
  return Status::Ok();
}

Status Where(Node& n) {
  Value c = n.input(0), x = n.input(1), y = n.input(2);
  TPUSIM_ASSIGN_OR_RETURN(Shape xy, Broadcast(n, x, y));
  Shape all;
  if (!BroadcastShapes(xy, Builder::ShapeOf(c), &all)) return n.Invalid("shapes do not broadcast");
  n.SetOutput(0, n.b().Select(c, x, y));
  return Status::Ok();
}

// A sequence or an optional passes through as it is.
Status Identity(Node& n) {
  if (!n.lowered(0).is_tensor()) {
    n.SetOutputLowered(0, n.lowered(0));
    return Status::Ok();
  }
  n.SetOutput(0, n.input(0));
  return Status::Ok();
}

Status Dropout(Node& n) {
  // Inference: the input unchanged and a mask of ones. training_mode (an
  // input from opset 12) is the same when the ratio is known to be 0; any
  // other training ratio draws a random mask, whose bits cannot match
  // another implementation's.
  if (n.has_input(2)) {
    TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> training, n.KnownInts(2, "training_mode"));
    if (!training.empty() && training[0] != 0) {
      std::vector<double> ratio = {0.5};
      if (n.has_input(1)) {
        TPUSIM_ASSIGN_OR_RETURN(ratio, n.KnownDoubles(1, "ratio"));
      }
      if (ratio.empty() || ratio[0] != 0) {
        return n.Unsupported("Dropout in training mode with a ratio other than 0");
      }
    }
  }
  if (n.opset() < 7 && n.Int("is_test", 0) == 0 && n.Float("ratio", 0.5f) != 0) {
    return n.Unsupported("Dropout in training mode with a ratio other than 0");
  }
  Value x = n.input(0);
  n.SetOutput(0, x);
  if (n.wants_output(1)) {
    // The mask is of X's type before opset 10, boolean after.
    const ElementType mask = n.opset() < 10 ? Builder::ElementOf(x) : ElementType::kI1;
    n.SetOutput(1, n.b().Splat(mask, 1, Builder::ShapeOf(x)));
  }
  return Status::Ok();
}

Status PRelu(Node& n) {
  Value x = n.input(0), slope = n.input(1);
  // Before opset 7 a slope of C values applies per channel (dimension 1).
  if (n.opset() < 7 && Builder::RankOf(slope) == 1 && Builder::RankOf(x) >= 2 &&
      Builder::ShapeOf(slope)[0] == Builder::ShapeOf(x)[1] && Builder::ShapeOf(x)[1] != 1) {
    slope = n.b().BroadcastInDim(slope, Builder::ShapeOf(x), {1});
  }
  TPUSIM_ASSIGN_OR_RETURN(Shape shape, Broadcast(n, x, slope));
  if (shape != Builder::ShapeOf(x)) return n.Invalid("slope does not broadcast to X");
  return Piecewise(n, [&](Builder& b, Value v) { return b.BinaryBroadcast("multiply", v, slope); });
}

#define UNARY(onnx, op) TPUSIM_REGISTER_ONNX_OP({onnx, [](Node& n) { return Unary(n, op); }})
#define BINARY(onnx, op) TPUSIM_REGISTER_ONNX_OP({onnx, [](Node& n) { return Binary(n, op); }})
#define COMPARE(onnx, dir) TPUSIM_REGISTER_ONNX_OP({onnx, [](Node& n) { return Compare(n, dir); }})

UNARY("Abs", "abs");
UNARY("Neg", "negate");
UNARY("Exp", "exponential");
UNARY("Log", "log");
UNARY("Sqrt", "sqrt");
UNARY("Floor", "floor");
UNARY("Ceil", "ceil");
UNARY("Round", "round_nearest_even");
UNARY("Sin", "sine");
UNARY("Cos", "cosine");
UNARY("Tan", "tan");
UNARY("Tanh", "tanh");
UNARY("Sigmoid", "logistic");
UNARY("Erf", "chlo.erf");
UNARY("Asin", "chlo.asin");
UNARY("Acos", "chlo.acos");
UNARY("Atan", "chlo.atan");
UNARY("Sinh", "chlo.sinh");
UNARY("Cosh", "chlo.cosh");
UNARY("Asinh", "chlo.asinh");
UNARY("Acosh", "chlo.acosh");
UNARY("Atanh", "chlo.atanh");
BINARY("Add", "add");
BINARY("Sub", "subtract");
BINARY("Mul", "multiply");
BINARY("Div", "divide");
BINARY("And", "and");
BINARY("Or", "or");
BINARY("Xor", "xor");
COMPARE("Equal", "EQ");
COMPARE("Less", "LT");
COMPARE("LessOrEqual", "LE");
COMPARE("Greater", "GT");
COMPARE("GreaterOrEqual", "GE");
TPUSIM_REGISTER_ONNX_OP({"Max", [](Node& n) { return Variadic(n, "maximum"); }});
TPUSIM_REGISTER_ONNX_OP({"Min", [](Node& n) { return Variadic(n, "minimum"); }});
TPUSIM_REGISTER_ONNX_OP({"Sum", [](Node& n) { return Variadic(n, "add"); }});
TPUSIM_REGISTER_ONNX_OP({"Mean", [](Node& n) { return Variadic(n, "add", true); }});
TPUSIM_REGISTER_ONNX_OP({"Relu", Relu});
TPUSIM_REGISTER_ONNX_OP({"LeakyRelu", LeakyRelu});
TPUSIM_REGISTER_ONNX_OP({"Elu", Elu});
TPUSIM_REGISTER_ONNX_OP({"Celu", Celu});
TPUSIM_REGISTER_ONNX_OP({"Selu", Selu});
TPUSIM_REGISTER_ONNX_OP({"ThresholdedRelu", ThresholdedRelu});
TPUSIM_REGISTER_ONNX_OP({"HardSigmoid", HardSigmoid});
TPUSIM_REGISTER_ONNX_OP({"HardSwish", HardSwish});
TPUSIM_REGISTER_ONNX_OP({"Softplus", Softplus});
TPUSIM_REGISTER_ONNX_OP({"Softsign", Softsign});
TPUSIM_REGISTER_ONNX_OP({"Shrink", Shrink});
TPUSIM_REGISTER_ONNX_OP({"Reciprocal", Reciprocal});
TPUSIM_REGISTER_ONNX_OP({"Pow", Pow});
TPUSIM_REGISTER_ONNX_OP({"Mod", Mod});
TPUSIM_REGISTER_ONNX_OP({"BitShift", BitShift});
TPUSIM_REGISTER_ONNX_OP({"Not", Not});
TPUSIM_REGISTER_ONNX_OP({"IsNaN", IsNaN});
TPUSIM_REGISTER_ONNX_OP({"IsInf", IsInf});
TPUSIM_REGISTER_ONNX_OP({"Sign", Sign});
TPUSIM_REGISTER_ONNX_OP({"Cast", Cast});
TPUSIM_REGISTER_ONNX_OP({"CastLike", CastLike});
TPUSIM_REGISTER_ONNX_OP({"Clip", Clip});
TPUSIM_REGISTER_ONNX_OP({"Where", Where});
TPUSIM_REGISTER_ONNX_OP({"Identity", Identity, "", /*takes_sequences=*/true});
TPUSIM_REGISTER_ONNX_OP({"Dropout", Dropout});
TPUSIM_REGISTER_ONNX_OP({"PRelu", PRelu});

}  // namespace
}  // namespace tpusim::frontend::onnx_import

// ONNX's losses: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss
// (opsets 12 and 13, which differ only in the types they take).
//
// Inputs are [N, C] or [N, C, d1, ..., dk] scores and [N] or [N, d1, ...,
// dk] integer targets (int32 or int64); the optional weight is [C]. A
// target's class is picked by a one-hot mask (iota over C == target) and a
// sum over C, the same for its weight: exact, and no index can go out of
// range. ignore_index (absent by default) zeroes a sample's loss and its
// weight; targets outside [0, C) that are not ignore_index are undefined by
// ONNX and give a loss of 0 here. reduction: "mean" (default) is
// sum(loss) / sum(weight of each sample) when a weight or ignore_index is
// given, else the mean over samples (NaN when every sample is ignored, as in
// ONNX's reference); "sum"; "none" keeps the [N, d1, ...] shape.
// SoftmaxCrossEntropyLoss is that loss of LogSoftmax over C, which it also
// returns as its optional second output (log_prob).
#include <limits>
#include <optional>
#include <string>

#include "frontend/onnx/node.h"

namespace tpusim::frontend::onnx_import {
namespace {

using ir::ElementType;

// The target's dimensions within the scores' (all but C, dimension 1).
std::vector<int64_t> SampleDims(int64_t rank) {
  std::vector<int64_t> dims = {0};
  for (int64_t d = 2; d < rank; ++d) dims.push_back(d);
  return dims;
}

Status CheckShapes(const Node& n, Value scores, Value target) {
  const Shape& xs = Builder::ShapeOf(scores);
  if (xs.size() < 2) return n.Invalid("needs [N, C, ...] scores");
  Shape want = xs;
  want.erase(want.begin() + 1);
  if (Builder::ShapeOf(target) != want) {
    return n.Invalid("the target " + target.type().ToString() + " does not fit the scores " +
                     scores.type().ToString());
  }
  if (n.has_input(2) && Builder::ShapeOf(n.input(2)) != Shape{xs[1]}) {
    return n.Invalid("the weight must be [C]");
  }
  return Status::Ok();
}

// The loss of log-probabilities `logp` [N, C, ...] for the node's target
// (input 1) and weight (input 2, optional), reduced as `reduction` asks.
StatusOr<Value> NllLoss(Node& n, Value logp) {
  Builder& b = n.b();
  Value target = n.input(1);
  TPUSIM_RETURN_IF_ERROR(CheckShapes(n, logp, target));
  const std::string reduction = n.String("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean") {
    return n.Invalid("reduction '" + reduction + "'");
  }
  const Shape& xs = Builder::ShapeOf(logp);
  const int64_t rank = static_cast<int64_t>(xs.size());
  target = b.Convert(target, ElementType::kSI64);
  Value hot = b.Compare("EQ", b.Iota(xs, 1, ElementType::kSI64),
                        b.BroadcastInDim(target, xs, SampleDims(rank)));
  auto pick = [&](Value per_class) {  // per_class[n, target, ...], 0 off range
    return b.Reduce(b.Select(hot, per_class, b.FullLike(logp, 0)), b.ScalarLike(logp, 0), {1},
                    "add");
  };
  Value loss = b.Unary("negate", pick(logp));
  std::optional<Value> weight;  // of each sample, when not all ones
  if (n.has_input(2)) {
    weight = pick(b.BroadcastInDim(b.Convert(n.input(2), Builder::ElementOf(logp)), xs, {1}));
  }
  if (n.has_attr("ignore_index")) {
    Value ii = b.Scalar(ElementType::kSI64, static_cast<double>(n.Int("ignore_index", 0)));
    Value kept = b.Compare("NE", target, ii);
    loss = b.Select(kept, loss, b.FullLike(loss, 0));
    weight = b.Select(kept, weight ? *weight : b.FullLike(loss, 1), b.FullLike(loss, 0));
  }
  if (n.has_input(2)) loss = b.Mul(loss, *weight);
  if (reduction == "none") return loss;
  std::vector<int64_t> all;
  for (int64_t d = 0; d < rank - 1; ++d) all.push_back(d);
  Value sum = b.Reduce(loss, b.ScalarLike(loss, 0), all, "add");
  if (reduction == "sum") return sum;
  Value total = weight ? b.Reduce(*weight, b.ScalarLike(loss, 0), all, "add")
                       : b.ScalarLike(loss, static_cast<double>(loss.type().num_elements()));
  return b.Div(sum, total);
}

Status NegativeLogLikelihoodLoss(Node& n) {
  TPUSIM_ASSIGN_OR_RETURN(Value loss, NllLoss(n, n.input(0)));
  n.SetOutput(0, loss);
  return Status::Ok();
}

// LogSoftmax over C: x - max - log(sum(exp(x - max))).
Value LogSoftmaxC(Builder& b, Value x) {
  const Shape& xs = Builder::ShapeOf(x);
  const int64_t rank = static_cast<int64_t>(xs.size());
  std::vector<int64_t> rest;
  for (int64_t d = 0; d < rank; ++d) {
    if (d != 1) rest.push_back(d);
  }
  Value m = b.Reduce(x, b.ScalarLike(x, -std::numeric_limits<double>::infinity()), {1}, "maximum");
  Value shifted = b.Sub(x, b.BroadcastInDim(m, xs, rest));
  Value sum = b.Reduce(b.Unary("exponential", shifted), b.ScalarLike(x, 0), {1}, "add");
  return b.Sub(shifted, b.BroadcastInDim(b.Unary("log", sum), xs, rest));
}

Status SoftmaxCrossEntropyLoss(Node& n) {
  Value x = n.input(0);
  if (Builder::RankOf(x) < 2) return n.Invalid("needs [N, C, ...] scores");
  Value logp = LogSoftmaxC(n.b(), x);
  TPUSIM_ASSIGN_OR_RETURN(Value loss, NllLoss(n, logp));
  n.SetOutput(0, loss);
  n.SetOutput(1, logp);
  return Status::Ok();
}

TPUSIM_REGISTER_ONNX_OP({"NegativeLogLikelihoodLoss", NegativeLogLikelihoodLoss});
TPUSIM_REGISTER_ONNX_OP({"SoftmaxCrossEntropyLoss", SoftmaxCrossEntropyLoss});

}  // namespace
}  // namespace tpusim::frontend::onnx_import

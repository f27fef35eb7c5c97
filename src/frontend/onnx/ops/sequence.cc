// ONNX's sequences of tensors and optionals, resolved at import: a sequence
// is the list of its elements' lowered tensors (graph.h's Lowered) and never
// one IR value, so its length, and the positions that index it, must be
// known at import; an optional is its element or absent, which is known at
// import too. The ops on them emit no code of their own but for
// SplitToSequence's slices and ConcatFromSequence's concatenation: they
// rearrange the elements, and SequenceMap lowers its body once per element.
//
// Positions (SequenceAt, SequenceInsert, SequenceErase) count from the back
// when negative, as onnxruntime reads them: an insert position in [-n, n],
// the others in [-n, n - 1], n the sequence's length; out of range is an
// error at import, as it is at run time elsewhere. Refused: a position or a
// SplitToSequence `split` computed at run time (they fix the sequence), a
// ConcatFromSequence of an empty sequence (whose element type and shape are
// not kept), a SequenceMap body whose outputs are sequences.
#include <algorithm>
#include <cstring>

#include "frontend/onnx/node.h"

namespace tpusim::frontend::onnx_import {
namespace {

using ir::ElementType;

Tensor ScalarTensor(ElementType element, int64_t v) {
  Tensor t = Tensor::Allocate(ir::Type::Tensor(element, {})).value();
  if (element == ElementType::kI1) {
    t.mutable_raw()[0] = v != 0 ? 1 : 0;
  } else {
    std::memcpy(t.mutable_raw(), &v, sizeof v);  // si64
  }
  return t;
}

// Input i, a tensor: what a sequence's elements must be.
StatusOr<Lowered> TensorInput(const Node& n, int i, std::string_view what) {
  const Lowered& l = n.lowered(i);
  if (!l.is_tensor()) {
    return n.Invalid(std::string(what) + " is " + l.KindName() + ", not a tensor");
  }
  return l;
}

// The position input i, known at import, as an index in [0, size + extra)
// (extra 1 for an insert, which may append).
StatusOr<int64_t> Position(const Node& n, int i, int64_t size, int64_t extra) {
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> pos, n.KnownInts(i, "the position"));
  if (pos.size() != 1) return n.Invalid("its position must be one integer");
  int64_t p = pos[0] < 0 ? pos[0] + size : pos[0];
  if (p < 0 || p >= size + extra) {
    return n.Invalid("position " + std::to_string(pos[0]) + " is out of range for a sequence of " +
                     std::to_string(size));
  }
  return p;
}

Status SequenceEmpty(Node& n) {
  n.SetOutputSequence(0, {});
  return Status::Ok();
}

// Its inputs are tensors (the graph refuses others, as for SplitToSequence).
Status SequenceConstruct(Node& n) {
  std::vector<Lowered> elements;
  for (int i = 0; i < n.num_inputs(); ++i) elements.push_back(n.lowered(i));
  n.SetOutputSequence(0, std::move(elements));
  return Status::Ok();
}

// The position is optional: appended at the back by default.
Status SequenceInsert(Node& n) {
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Lowered> seq, n.InputSequence(0, "input_sequence"));
  TPUSIM_ASSIGN_OR_RETURN(Lowered t, TensorInput(n, 1, "tensor"));
  const int64_t size = static_cast<int64_t>(seq.size());
  int64_t at = size;
  if (n.has_input(2)) {
    TPUSIM_ASSIGN_OR_RETURN(at, Position(n, 2, size, 1));
  }
  seq.insert(seq.begin() + at, std::move(t));
  n.SetOutputSequence(0, std::move(seq));
  return Status::Ok();
}

Status SequenceAt(Node& n) {
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Lowered> seq, n.InputSequence(0, "input_sequence"));
  TPUSIM_ASSIGN_OR_RETURN(int64_t at, Position(n, 1, static_cast<int64_t>(seq.size()), 0));
  n.SetOutputLowered(0, seq[at]);
  return Status::Ok();
}

// The position is optional: the last element by default.
Status SequenceErase(Node& n) {
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Lowered> seq, n.InputSequence(0, "input_sequence"));
  const int64_t size = static_cast<int64_t>(seq.size());
  if (size == 0) return n.Invalid("erases from an empty sequence");
  int64_t at = size - 1;
  if (n.has_input(1)) {
    TPUSIM_ASSIGN_OR_RETURN(at, Position(n, 1, size, 0));
  }
  seq.erase(seq.begin() + at);
  n.SetOutputSequence(0, std::move(seq));
  return Status::Ok();
}

Status SequenceLength(Node& n) {
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Lowered> seq, n.InputSequence(0, "input_sequence"));
  n.SetKnownOutput(0, ScalarTensor(ElementType::kSI64, static_cast<int64_t>(seq.size())));
  return Status::Ok();
}

// The chunk lengths along a dimension of `dim` rows: `split` a scalar (equal
// chunks, the last one shorter) or a list summing to `dim`; without it,
// rows one by one.
StatusOr<std::vector<int64_t>> ChunkLengths(const Node& n, int64_t dim) {
  if (!n.has_input(1)) return std::vector<int64_t>(dim, 1);
  TPUSIM_ASSIGN_OR_RETURN(Tensor t, n.Known(1, "split"));
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> split, n.KnownInts(1, "split"));
  std::vector<int64_t> out;
  if (t.type().rank() == 0) {
    if (split.at(0) <= 0) return n.Invalid("split must be positive");
    for (int64_t at = 0; at < dim; at += split[0]) out.push_back(std::min(split[0], dim - at));
    return out;
  }
  int64_t sum = 0;
  for (int64_t s : split) {
    if (s < 0) return n.Invalid("split has a negative length");
    sum += s;
  }
  if (sum != dim) {
    return n.Invalid("split sums to " + std::to_string(sum) + ", not the dimension's " +
                     std::to_string(dim));
  }
  return split;
}

// keepdims (default 1) applies only without `split`: rows then lose the
// split axis when it is 0.
Status SplitToSequence(Node& n) {
  Value x = n.input(0);
  Builder& b = n.b();
  const Shape shape = Builder::ShapeOf(x);
  TPUSIM_ASSIGN_OR_RETURN(int64_t axis, n.Axis(n.Int("axis", 0), Builder::RankOf(x)));
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> lengths, ChunkLengths(n, shape[axis]));
  const bool squeeze = !n.has_input(1) && n.Int("keepdims", 1) == 0;
  Shape squeezed = shape;
  squeezed.erase(squeezed.begin() + axis);
  std::vector<Lowered> elements;
  int64_t at = 0;
  for (int64_t len : lengths) {
    Value chunk = b.SliceDim(x, axis, at, at + len);
    if (squeeze) chunk = b.Reshape(chunk, squeezed);
    elements.push_back(Lowered{chunk, std::nullopt, ""});
    at += len;
  }
  n.SetOutputSequence(0, std::move(elements));
  return Status::Ok();
}

// new_axis (default 0) 1 stacks the elements along a new dimension `axis`
// in [-r - 1, r]; else they join along `axis` in [-r, r - 1].
Status ConcatFromSequence(Node& n) {
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Lowered> seq, n.InputSequence(0, "input_sequence"));
  if (seq.empty()) return n.Unsupported("ConcatFromSequence of an empty sequence");
  if (!n.has_attr("axis")) return n.Invalid("needs the attribute 'axis'");
  const bool stack = n.Int("new_axis", 0) != 0;
  Builder& b = n.b();
  const int64_t rank = Builder::RankOf(seq[0].value);
  TPUSIM_ASSIGN_OR_RETURN(int64_t axis, n.Axis(n.Int("axis", 0), rank + (stack ? 1 : 0)));
  std::vector<Value> parts;
  for (const Lowered& e : seq) {
    Shape s = Builder::ShapeOf(e.value);
    Shape first = Builder::ShapeOf(seq[0].value);
    if (!stack) s[axis] = first[axis];
    if (s != first) return n.Invalid("the sequence's elements differ in shape off the axis");
    if (stack) s.insert(s.begin() + axis, 1);
    parts.push_back(stack ? b.Reshape(e.value, s) : e.value);
  }
  n.SetOutput(0, b.Concat(parts, axis));
  return Status::Ok();
}

// The body runs once per element of the input sequences (all of one
// length), taking the other inputs whole; output j collects its output j.
Status SequenceMap(Node& n) {
  const onnx::GraphProto* body = n.GraphAttr("body");
  if (body == nullptr) return n.Invalid("needs a body");
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Lowered> first, n.InputSequence(0, "input_sequence"));
  const size_t size = first.size();
  for (int i = 1; i < n.num_inputs(); ++i) {
    const Lowered& l = n.lowered(i);
    if (l.is_none) return n.Invalid("input " + std::to_string(i) + " is an absent optional");
    if (l.sequence && l.sequence->size() != size) {
      return n.Invalid("its input sequences differ in length (" + std::to_string(size) + " and " +
                       std::to_string(l.sequence->size()) + ")");
    }
  }
  std::vector<std::vector<Lowered>> outs(body->output_size());
  for (size_t k = 0; k < size; ++k) {
    std::vector<Lowered> args;
    for (int i = 0; i < n.num_inputs(); ++i) {
      const Lowered& l = n.lowered(i);
      args.push_back(l.sequence ? (*l.sequence)[k] : l);
    }
    TPUSIM_ASSIGN_OR_RETURN(std::vector<Lowered> ys,
                            n.LowerSubgraphLowered(*body, args, n.b().block()));
    for (size_t j = 0; j < ys.size(); ++j) {
      if (!ys[j].is_tensor()) {
        return n.Unsupported("a SequenceMap body output that is not a tensor");
      }
      outs[j].push_back(std::move(ys[j]));
    }
  }
  for (size_t j = 0; j < outs.size(); ++j) {
    n.SetOutputSequence(static_cast<int>(j), std::move(outs[j]));
  }
  return Status::Ok();
}

// Without an input, an absent optional of the `type` attribute's type
// (which an absent optional does not keep).
Status Optional(Node& n) {
  if (n.has_input(0)) {
    n.SetOutputLowered(0, n.lowered(0));
  } else {
    n.SetOutputNone(0);
  }
  return Status::Ok();
}

// From opset 18 the input may itself be missing (then false), or a tensor
// or sequence (true).
Status OptionalHasElement(Node& n) {
  const bool has = n.has_input(0) && !n.lowered(0).is_none;
  n.SetKnownOutput(0, ScalarTensor(ElementType::kI1, has ? 1 : 0));
  return Status::Ok();
}

// An absent optional is an error, as at run time elsewhere; a tensor or
// sequence (opset 18) is its own element.
Status OptionalGetElement(Node& n) {
  if (n.lowered(0).is_none) return n.Invalid("its input is an absent optional");
  n.SetOutputLowered(0, n.lowered(0));
  return Status::Ok();
}

TPUSIM_REGISTER_ONNX_OP({"SequenceEmpty", SequenceEmpty});
TPUSIM_REGISTER_ONNX_OP({"SequenceConstruct", SequenceConstruct});
TPUSIM_REGISTER_ONNX_OP({"SequenceInsert", SequenceInsert, "", true});
TPUSIM_REGISTER_ONNX_OP({"SequenceAt", SequenceAt, "", true});
TPUSIM_REGISTER_ONNX_OP({"SequenceErase", SequenceErase, "", true});
TPUSIM_REGISTER_ONNX_OP({"SequenceLength", SequenceLength, "", true});
TPUSIM_REGISTER_ONNX_OP({"SplitToSequence", SplitToSequence});
TPUSIM_REGISTER_ONNX_OP({"ConcatFromSequence", ConcatFromSequence, "", true});
TPUSIM_REGISTER_ONNX_OP({"SequenceMap", SequenceMap, "", true});
TPUSIM_REGISTER_ONNX_OP({"Optional", Optional, "", true});
TPUSIM_REGISTER_ONNX_OP({"OptionalHasElement", OptionalHasElement, "", true});
TPUSIM_REGISTER_ONNX_OP({"OptionalGetElement", OptionalGetElement, "", true});

}  // namespace
}  // namespace tpusim::frontend::onnx_import

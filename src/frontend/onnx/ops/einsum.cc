// ONNX's Einsum (opset 12): "term1,term2,...->output" over any number of
// operands, or without "->" the implicit output (numpy's: the ellipsis
// dimensions first, then the letters that occur once in the equation, in
// alphabetical order). Spaces are ignored; letters are a-z and A-Z.
//
// Ellipsis: "..." stands for an operand's leading dimensions not named by
// letters; the operands' ellipses broadcast by numpy's rule (aligned at the
// right). A letter or ellipsis dimension of size 1 where another operand's
// is larger broadcasts: it is dropped from that operand, whose product then
// repeats along it.
//
// Each operand first loses its repeated letters (a diagonal: the elements
// whose two indices are equal, selected by an iota mask and summed along one
// of the two dimensions) and the letters that no other operand and not the
// output has (a sum, by stablehlo.reduce). Operands are then contracted
// pairwise, left to right, by stablehlo.dot_general: its batch dimensions
// are the letters both sides have that the output or a later operand needs,
// its contracting dimensions the letters both sides have that nothing later
// needs; the result is finally transposed into the output's order.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "frontend/onnx/node.h"

namespace tpusim::frontend::onnx_import {
namespace {

using ir::ElementType;

constexpr int kEllipsis = -1;       // the token "..."
constexpr int kEllipsisDim = 1000;  // label of the ellipsis's k-th dimension: kEllipsisDim + k

// An operand with a label per dimension.
struct Labeled {
  Value v;
  std::vector<int> labels;
};

bool Has(const std::vector<int>& labels, int l) {
  return std::find(labels.begin(), labels.end(), l) != labels.end();
}

int64_t Position(const std::vector<int>& labels, int l) {
  return std::find(labels.begin(), labels.end(), l) - labels.begin();
}

// A term's tokens: letters, and kEllipsis for "...".
StatusOr<std::vector<int>> Tokens(const Node& n, const std::string& term) {
  std::vector<int> out;
  bool ellipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    const char c = term[i];
    if (c == '.') {
      if (ellipsis || term.compare(i, 3, "...") != 0) {
        return n.Invalid("the equation's term '" + term + "' has a stray '.' or two ellipses");
      }
      ellipsis = true;
      out.push_back(kEllipsis);
      i += 2;
    } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      out.push_back(c);
    } else {
      return n.Invalid(std::string("the equation has the character '") + c + "'");
    }
  }
  return out;
}

// Tokens with the ellipsis expanded to `count` dimensions, the last of the
// `total` ellipsis dimensions.
std::vector<int> Expand(const std::vector<int>& tokens, int64_t count, int64_t total) {
  std::vector<int> out;
  for (int t : tokens) {
    if (t != kEllipsis) {
      out.push_back(t);
      continue;
    }
    for (int64_t k = total - count; k < total; ++k) {
      out.push_back(kEllipsisDim + static_cast<int>(k));
    }
  }
  return out;
}

// x summed over the dimensions labelled in `drop`.
void SumOver(Builder& b, Labeled& x, const std::vector<int>& drop) {
  std::vector<int64_t> dims;
  std::vector<int> kept;
  for (size_t d = 0; d < x.labels.size(); ++d) {
    if (Has(drop, x.labels[d])) {
      dims.push_back(static_cast<int64_t>(d));
    } else {
      kept.push_back(x.labels[d]);
    }
  }
  if (dims.empty()) return;
  x.labels = kept;
  x.v = b.Reduce(x.v, b.ScalarLike(x.v, 0), dims, "add");
}

// x's diagonals: each repeated label kept once.
Status TakeDiagonals(const Node& n, Builder& b, Labeled& x) {
  for (size_t q = 1; q < x.labels.size(); ++q) {
    const int64_t p = Position(x.labels, x.labels[q]);
    if (p == static_cast<int64_t>(q)) continue;
    const Shape& shape = Builder::ShapeOf(x.v);
    if (shape[p] != shape[q]) {
      return n.Invalid("a repeated letter names dimensions of sizes " + std::to_string(shape[p]) +
                       " and " + std::to_string(shape[q]));
    }
    Value on = b.Compare("EQ", b.Iota(shape, p, ElementType::kSI64),
                         b.Iota(shape, static_cast<int64_t>(q), ElementType::kSI64));
    x.v = b.Reduce(b.Select(on, x.v, b.FullLike(x.v, 0)), b.ScalarLike(x.v, 0),
                   {static_cast<int64_t>(q)}, "add");
    x.labels.erase(x.labels.begin() + q);
    --q;
  }
  return Status::Ok();
}

// x without its dimensions of size 1 that broadcast against larger ones.
void DropBroadcast(Builder& b, Labeled& x, const std::map<int, int64_t>& sizes) {
  Shape shape;
  std::vector<int> kept;
  for (size_t d = 0; d < x.labels.size(); ++d) {
    const int64_t size = Builder::ShapeOf(x.v)[d];
    if (size == 1 && sizes.at(x.labels[d]) > 1) continue;
    shape.push_back(size);
    kept.push_back(x.labels[d]);
  }
  x.v = b.Reshape(x.v, shape);
  x.labels = kept;
}

// a and b contracted over the labels both have and `later` does not need.
Labeled Contract(Builder& b, Labeled a, Labeled c, const std::vector<int>& later) {
  std::vector<int> only_a, only_c;
  for (int l : a.labels) {
    if (!Has(c.labels, l) && !Has(later, l)) only_a.push_back(l);
  }
  for (int l : c.labels) {
    if (!Has(a.labels, l) && !Has(later, l)) only_c.push_back(l);
  }
  SumOver(b, a, only_a);
  SumOver(b, c, only_c);
  std::vector<int64_t> a_batch, c_batch, a_con, c_con;
  Labeled out;
  for (size_t d = 0; d < a.labels.size(); ++d) {
    const int l = a.labels[d];
    if (!Has(c.labels, l)) continue;
    (Has(later, l) ? a_batch : a_con).push_back(static_cast<int64_t>(d));
    (Has(later, l) ? c_batch : c_con).push_back(Position(c.labels, l));
    if (Has(later, l)) out.labels.push_back(l);
  }
  for (int l : a.labels) {
    if (!Has(c.labels, l)) out.labels.push_back(l);
  }
  for (int l : c.labels) {
    if (!Has(a.labels, l)) out.labels.push_back(l);
  }
  out.v = b.DotGeneral(a.v, c.v, a_batch, c_batch, a_con, c_con, Builder::ElementOf(a.v));
  return out;
}

Status Einsum(Node& n) {
  Builder& b = n.b();
  std::string eq = n.String("equation", "");
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::vector<int>> tokens;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    TPUSIM_ASSIGN_OR_RETURN(std::vector<int> t, Tokens(n, lhs.substr(start, comma - start)));
    tokens.push_back(std::move(t));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (static_cast<int>(tokens.size()) != n.num_inputs()) {
    return n.Invalid("the equation has " + std::to_string(tokens.size()) + " terms for " +
                     std::to_string(n.num_inputs()) + " inputs");
  }
  // Each operand's ellipsis length, and the broadcast one's.
  std::vector<int64_t> ellipsis(tokens.size());
  int64_t total = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const int64_t letters =
        std::count_if(tokens[i].begin(), tokens[i].end(), [](int t) { return t != kEllipsis; });
    ellipsis[i] = Builder::RankOf(n.input(static_cast<int>(i))) - letters;
    if (ellipsis[i] < 0 || (ellipsis[i] > 0 && !Has(tokens[i], kEllipsis))) {
      return n.Invalid("term " + std::to_string(i) + " of the equation does not fit its input " +
                       n.input(static_cast<int>(i)).type().ToString());
    }
    total = std::max(total, ellipsis[i]);
  }
  std::vector<Labeled> ops;
  std::map<int, int64_t> sizes;
  for (size_t i = 0; i < tokens.size(); ++i) {
    Labeled x{n.input(static_cast<int>(i)), Expand(tokens[i], ellipsis[i], total)};
    if (i > 0 && Builder::ElementOf(x.v) != Builder::ElementOf(ops[0].v)) {
      return n.Invalid("its inputs have different types");
    }
    for (size_t d = 0; d < x.labels.size(); ++d) {
      const int64_t size = Builder::ShapeOf(x.v)[d];
      auto [it, fresh] = sizes.emplace(x.labels[d], size);
      if (fresh || it->second == size || size == 1) continue;
      if (it->second != 1) return n.Invalid("a letter names dimensions of different sizes");
      it->second = size;
    }
    ops.push_back(std::move(x));
  }
  std::vector<int> out;
  if (arrow != std::string::npos) {
    TPUSIM_ASSIGN_OR_RETURN(std::vector<int> t, Tokens(n, eq.substr(arrow + 2)));
    out = Expand(t, total, total);
  } else {
    std::map<int, int> count;  // letters, sorted
    for (const Labeled& x : ops) {
      for (int l : x.labels) ++count[l];
    }
    out = Expand({kEllipsis}, total, total);
    for (auto [l, c] : count) {
      if (c == 1 && l < kEllipsisDim) out.push_back(l);
    }
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (!sizes.count(out[i]) || Position(out, out[i]) != static_cast<int64_t>(i)) {
      return n.Invalid("the output's letters must each be once in it and in an input");
    }
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    TPUSIM_RETURN_IF_ERROR(TakeDiagonals(n, b, ops[i]));
    DropBroadcast(b, ops[i], sizes);
    std::vector<int> alone;
    for (int l : ops[i].labels) {
      bool elsewhere = Has(out, l);
      for (size_t j = 0; j < ops.size(); ++j) elsewhere |= j != i && Has(ops[j].labels, l);
      if (!elsewhere) alone.push_back(l);
    }
    SumOver(b, ops[i], alone);
  }
  Labeled acc = ops[0];
  for (size_t k = 1; k < ops.size(); ++k) {
    std::vector<int> later = out;
    for (size_t j = k + 1; j < ops.size(); ++j) {
      later.insert(later.end(), ops[j].labels.begin(), ops[j].labels.end());
    }
    acc = Contract(b, acc, ops[k], later);
  }
  std::vector<int64_t> perm;
  for (int l : out) perm.push_back(Position(acc.labels, l));
  n.SetOutput(0, b.Transpose(acc.v, perm));
  return Status::Ok();
}

TPUSIM_REGISTER_ONNX_OP({"Einsum", Einsum});

}  // namespace
}  // namespace tpusim::frontend::onnx_import

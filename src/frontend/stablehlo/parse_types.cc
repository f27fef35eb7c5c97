// Types: tensor<2x3xf32>, tuple<...>, !stablehlo.token, and type aliases.
#include <charconv>
#include <limits>

#include "frontend/stablehlo/parser.h"
#include "tpusim/ir/dynamic.h"

namespace tpusim::frontend {
namespace {

// MLIR builtin element types that tpusim does not model (i128, f80, tf32,
// index, other f8 variants...): unsupported rather than malformed.
bool IsOtherBuiltinType(std::string_view s) {
  if (s == "index" || s == "tf32" || s == "f80" || s == "f128" || s.starts_with("f8") ||
      s.starts_with("f6") || s.starts_with("f4")) {
    return true;
  }
  if (s.starts_with("si") || s.starts_with("ui")) s.remove_prefix(1);
  if (s.size() < 2 || s[0] != 'i') return false;
  for (char c : s.substr(1)) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

bool Parser::AtTypeStart() const {
  return tok_.is(TokenKind::kBangId) || tok_.IsKeyword("tensor") || tok_.IsKeyword("tuple") ||
         tok_.IsKeyword("memref") || tok_.IsKeyword("vector");
}

StatusOr<ir::ElementType> Parser::ParseElementType() {
  size_t offset = tok_.offset;
  if (ConsumeKeyword("complex")) {
    TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kLess, "'<'"));
    TPUSIM_ASSIGN_OR_RETURN(ir::ElementType part, ParseElementType());
    TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kGreater, "'>'"));
    if (part == ir::ElementType::kF32) return ir::ElementType::kC64;
    if (part == ir::ElementType::kF64) return ir::ElementType::kC128;
    return UnimplementedAt(offset, "complex element type must have f32 or f64 parts");
  }
  if (tok_.is(TokenKind::kBangId)) {
    if (tok_.text.starts_with("!quant.")) {
      return UnimplementedAt(offset, "quantized types are unsupported");
    }
    return Error("unknown element type '" + std::string(tok_.text) + "'");
  }
  if (!tok_.is(TokenKind::kBareId)) return Error("expected an element type");
  if (index_as_i64_ && tok_.text == "index") {
    Advance();
    return ir::ElementType::kSI64;
  }
  std::optional<ir::ElementType> t = ir::ParseElementType(tok_.text);
  if (!t) {
    if (IsOtherBuiltinType(tok_.text)) {
      return UnimplementedAt(offset, "element type '" + std::string(tok_.text) + "' is unsupported");
    }
    return Error("expected an element type, found '" + std::string(tok_.text) + "'");
  }
  Advance();
  return *t;
}

// `#tpusim.layout<{1,0}>`, the encoding the printer gives a non-default
// layout (ir::Type::layout), at its first token.
static StatusOr<std::vector<int64_t>> ParseLayoutEncoding(Parser& p, int64_t rank) {
  size_t offset = p.tok().offset;
  p.Advance();
  TPUSIM_RETURN_IF_ERROR(p.Expect(TokenKind::kLess, "'<' after #tpusim.layout"));
  TPUSIM_RETURN_IF_ERROR(p.Expect(TokenKind::kLBrace, "'{' opening the layout"));
  std::vector<int64_t> layout;
  while (!p.tok().is(TokenKind::kRBrace)) {
    if (!layout.empty()) TPUSIM_RETURN_IF_ERROR(p.Expect(TokenKind::kComma, "',' or '}'"));
    TPUSIM_ASSIGN_OR_RETURN(int64_t d, p.ParseInt64());
    layout.push_back(d);
  }
  p.Advance();
  TPUSIM_RETURN_IF_ERROR(p.Expect(TokenKind::kGreater, "'>' closing the layout"));
  if (!ir::IsValidLayout(layout, rank)) {
    return p.ErrorAt(offset, "layout " + ir::LayoutString(layout) +
                                 " is not a permutation of the tensor's " +
                                 std::to_string(rank) + " dimensions");
  }
  return layout;
}

// tensor<...> after the keyword and '<'. MLIR spells dimensions and the
// element type as one run (`2x3xf32` lexes as `2` then `x3xf32`), so each
// `x` is split off by re-lexing right after it.
static StatusOr<ir::Type> ParseTensorBody(Parser& p) {
  ir::Shape shape;
  int64_t elements = 1;
  for (;;) {
    const Token& t = p.tok();
    if (t.is(TokenKind::kStar)) {
      return p.UnimplementedAt(t.offset, "unranked tensors (tensor<*x...>) are unsupported");
    }
    if (t.is(TokenKind::kQuestion)) {
      // A dynamic dimension: the refine-shapes pass sizes it from the inputs.
      size_t offset = t.offset;
      shape.push_back(ir::kDynamicDim);
      p.Advance();
      const Token& x = p.tok();
      if (x.kind != TokenKind::kBareId || x.text.empty() || x.text[0] != 'x' ||
          x.offset != offset + 1) {
        return p.Error("expected 'x' after a dimension");
      }
      p.ResetTo(x.offset + 1);
      continue;
    }
    if (!t.is(TokenKind::kInteger)) break;
    size_t offset = t.offset;
    int64_t dim = 0;
    size_t digits = t.text.size();
    if (t.text.size() > 1 && t.text[1] == 'x') {
      digits = 1;  // `0x2xi8`: a zero dimension, not a hex number
    }
    auto [ptr, ec] = std::from_chars(t.text.data(), t.text.data() + digits, dim);
    if (ec != std::errc()) return p.ErrorAt(offset, "dimension too large");
    if (dim != 0 && elements > kMaxElements / dim) {
      return p.ErrorAt(offset, "tensor has too many elements");
    }
    elements *= dim;
    shape.push_back(dim);
    if (digits < t.text.size()) {
      p.ResetTo(offset + 2);  // past "0x"
      continue;
    }
    p.Advance();
    const Token& x = p.tok();
    if (x.kind != TokenKind::kBareId || x.text.empty() || x.text[0] != 'x' ||
        x.offset != offset + digits) {
      return p.Error("expected 'x' after a dimension");
    }
    p.ResetTo(x.offset + 1);
  }
  TPUSIM_ASSIGN_OR_RETURN(ir::ElementType element, p.ParseElementType());
  std::vector<int64_t> layout;
  if (p.tok().is(TokenKind::kComma)) {
    p.Advance();
    if (p.tok().text == "#tpusim.layout") {
      TPUSIM_ASSIGN_OR_RETURN(layout, ParseLayoutEncoding(p, static_cast<int64_t>(shape.size())));
    } else if (p.tok().text.starts_with("#stablehlo.bounds") ||
               p.tok().text.starts_with("#stablehlo.type_extensions")) {
      return p.UnimplementedAt(p.tok().offset, "dynamic shapes unsupported (bounded dimensions)");
    } else {
      return p.UnimplementedAt(p.tok().offset, "tensor encodings are unsupported");
    }
  }
  TPUSIM_RETURN_IF_ERROR(p.Expect(TokenKind::kGreater, "'>' closing the tensor type"));
  return ir::Type::Tensor(element, std::move(shape)).WithLayout(std::move(layout));
}

StatusOr<ir::Type> Parser::ParseType() {
  TPUSIM_NESTING_GUARD(this);
  size_t offset = tok_.offset;
  if (tok_.is(TokenKind::kBangId)) {
    std::string_view name = tok_.text;
    if (name == "!stablehlo.token") {
      Advance();
      return ir::Type::Token();
    }
    if (name.starts_with("!quant.")) return UnimplementedAt(offset, "quantized types are unsupported");
    auto it = type_aliases_.find(name.substr(1));
    if (it != type_aliases_.end()) {
      Advance();
      return it->second;
    }
    return Error("unknown type '" + std::string(name) + "'");
  }
  if (ConsumeKeyword("tensor")) {
    TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kLess, "'<'"));
    return ParseTensorBody(*this);
  }
  if (ConsumeKeyword("tuple")) {
    TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kLess, "'<'"));
    std::vector<ir::Type> elements;
    if (!Consume(TokenKind::kGreater)) {
      TPUSIM_RETURN_IF_ERROR(ParseTypeList(&elements));
      TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kGreater, "'>' closing the tuple type"));
    }
    return ir::Type::Tuple(std::move(elements));
  }
  if (tok_.IsKeyword("memref") || tok_.IsKeyword("vector")) {
    return UnimplementedAt(offset, std::string(tok_.text) + " types are unsupported");
  }
  return Error("expected a type");
}

StatusOr<ir::Type> Parser::ParseAttributeType() {
  const bool outer = index_as_i64_;
  index_as_i64_ = true;
  StatusOr<ir::Type> t = ParseType();
  index_as_i64_ = outer;
  return t;
}

Status Parser::ParseTypeList(std::vector<ir::Type>* types) {
  do {
    TPUSIM_ASSIGN_OR_RETURN(ir::Type t, ParseType());
    types->push_back(std::move(t));
  } while (Consume(TokenKind::kComma));
  return Status::Ok();
}

Status Parser::ParseResultTypes(std::vector<ir::Type>* results) {
  if (!Consume(TokenKind::kLParen)) {
    TPUSIM_ASSIGN_OR_RETURN(ir::Type t, ParseType());
    results->push_back(std::move(t));
    return Status::Ok();
  }
  if (Consume(TokenKind::kRParen)) return Status::Ok();
  TPUSIM_RETURN_IF_ERROR(ParseTypeList(results));
  return Expect(TokenKind::kRParen, "')'");
}

Status Parser::ParseFunctionType(std::vector<ir::Type>* inputs, std::vector<ir::Type>* results) {
  TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'(' starting a function type"));
  if (!Consume(TokenKind::kRParen)) {
    TPUSIM_RETURN_IF_ERROR(ParseTypeList(inputs));
    TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')'"));
  }
  TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kArrow, "'->'"));
  return ParseResultTypes(results);
}

}  // namespace tpusim::frontend

// The shared grammar of pretty op forms: a list of items (operands,
// `key = value`, bare enum words, literals, `[a:b]` index groups, `(...)`
// groups), an optional attribute dictionary and a `:` type signature. Each
// op's rule in pretty_ops.cc then maps the items to generic attributes.
#include <charconv>

#include "frontend/stablehlo/parser.h"

namespace tpusim::frontend {
namespace {

bool AtItem(const Token& t) {
  return t.is(TokenKind::kPercentId) || t.is(TokenKind::kBareId) || t.is(TokenKind::kAtId) ||
         t.is(TokenKind::kString) || t.is(TokenKind::kLParen) || t.is(TokenKind::kLSquare);
}

StatusOr<ir::Attribute> ParseNumber(Parser& p) {
  size_t offset = p.tok().offset;
  if (p.tok().is(TokenKind::kFloat) ||
      (p.tok().is(TokenKind::kMinus) && p.tok().text.size() == 1)) {
    bool negative = p.Consume(TokenKind::kMinus);
    if (p.tok().is(TokenKind::kInteger)) {
      TPUSIM_ASSIGN_OR_RETURN(int64_t v, p.ParseInt64());
      return ir::Attribute::Int(negative ? -v : v);
    }
    if (!p.tok().is(TokenKind::kFloat)) return p.Error("expected a number");
    double v = 0;
    std::string_view s = p.tok().text;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() && ec != std::errc::result_out_of_range) {
      return p.ErrorAt(offset, "bad float literal");
    }
    p.Advance();
    return ir::Attribute::Float(negative ? -v : v, ir::ElementType::kF64);
  }
  TPUSIM_ASSIGN_OR_RETURN(int64_t v, p.ParseInt64());
  return ir::Attribute::Int(v);
}

// `[...]` in a pretty value: ints, words, bools or nested lists.
StatusOr<ir::Attribute> ParseList(Parser& p) {
  TPUSIM_NESTING_GUARD(&p);
  TPUSIM_RETURN_IF_ERROR(p.Expect(TokenKind::kLSquare, "'['"));
  std::vector<ir::Attribute> elems;
  if (!p.Consume(TokenKind::kRSquare)) {
    do {
      const Token& t = p.tok();
      if (t.is(TokenKind::kLSquare)) {
        TPUSIM_ASSIGN_OR_RETURN(ir::Attribute inner, ParseList(p));
        elems.push_back(std::move(inner));
      } else if (t.IsKeyword("true") || t.IsKeyword("false")) {
        elems.push_back(ir::Attribute::Bool(t.text == "true"));
        p.Advance();
      } else if (t.is(TokenKind::kBareId)) {
        elems.push_back(ir::Attribute::String(std::string(t.text)));
        p.Advance();
      } else if (t.is(TokenKind::kHashId)) {
        TPUSIM_ASSIGN_OR_RETURN(ir::Attribute a, p.ParseAttribute());
        elems.push_back(std::move(a));
      } else {
        TPUSIM_ASSIGN_OR_RETURN(ir::Attribute n, ParseNumber(p));
        elems.push_back(std::move(n));
      }
    } while (p.Consume(TokenKind::kComma));
    TPUSIM_RETURN_IF_ERROR(p.Expect(TokenKind::kRSquare, "']'"));
  }
  return ir::Attribute::Array(std::move(elems));
}

// `[0:2, 1:3:1]` (slice) or `[0]` (get_tuple_element) after an operand.
Status ParseIndexGroup(Parser& p, PrettyOp* op) {
  if (op->has_index_group) return p.Error("unexpected second index list");
  op->has_index_group = true;
  p.Advance();  // '['
  if (p.Consume(TokenKind::kRSquare)) return Status::Ok();
  do {
    std::vector<int64_t> entry;
    do {
      TPUSIM_ASSIGN_OR_RETURN(int64_t v, p.ParseInt64());
      entry.push_back(v);
    } while (entry.size() < 3 && p.Consume(TokenKind::kColon));
    op->index_group.push_back(std::move(entry));
  } while (p.Consume(TokenKind::kComma));
  return p.Expect(TokenKind::kRSquare, "']'");
}

}  // namespace

StatusOr<ir::Attribute> Parser::ParsePrettyValue(std::string_view key) {
  TPUSIM_NESTING_GUARD(this);
  if (key == "dim_numbers") return ParseConvDimensionNumbers();
  if (Consume(TokenKind::kLess)) {
    if (key != "algorithm") return Error("unexpected '<'");
    return ParseStructBody("stablehlo.dot_algorithm");
  }
  if (Consume(TokenKind::kLBrace)) {
    std::vector<ir::NamedAttribute> entries;
    if (!Consume(TokenKind::kRBrace)) {
      do {
        if (!tok_.is(TokenKind::kBareId)) return Error("expected a name");
        std::string name(tok_.text);
        Advance();
        TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'='"));
        TPUSIM_ASSIGN_OR_RETURN(ir::Attribute v, ParsePrettyValue(name));
        entries.emplace_back(std::move(name), std::move(v));
      } while (Consume(TokenKind::kComma));
      TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kRBrace, "'}'"));
    }
    return ir::Attribute::Dict(std::move(entries));
  }
  if (tok_.is(TokenKind::kLSquare)) {
    TPUSIM_ASSIGN_OR_RETURN(ir::Attribute lhs, ParseList(*this));
    if (!ConsumeKeyword("x")) return lhs;
    // `batching_dims = [0] x [0]`: lhs and rhs lists.
    TPUSIM_ASSIGN_OR_RETURN(ir::Attribute rhs, ParseList(*this));
    return ir::Attribute::Array({lhs, rhs});
  }
  if (tok_.is(TokenKind::kString) || tok_.is(TokenKind::kHashId) || tok_.is(TokenKind::kAtId)) {
    return ParseAttribute();
  }
  if (ConsumeKeyword("true")) return ir::Attribute::Bool(true);
  if (ConsumeKeyword("false")) return ir::Attribute::Bool(false);
  if (tok_.is(TokenKind::kBareId)) {
    ir::Attribute word = ir::Attribute::String(std::string(tok_.text));
    Advance();
    return word;
  }
  return ParseNumber(*this);
}

Status Parser::ParsePrettyItems(PrettyOp* p) {
  TPUSIM_NESTING_GUARD(this);
  // Items are comma separated, except that `@callee(`, `"name" %x`,
  // `(...) dim_numbers` and `%x [0:1]` juxtapose.
  bool juxtaposed = false;
  while (AtItem(tok_)) {
    const Token t = tok_;
    juxtaposed = false;
    if (t.is(TokenKind::kPercentId)) {
      TPUSIM_ASSIGN_OR_RETURN(ir::Value v, ParseValueUse());
      p->operands.push_back(v);
      if (tok_.is(TokenKind::kLSquare)) TPUSIM_RETURN_IF_ERROR(ParseIndexGroup(*this, p));
    } else if (t.is(TokenKind::kLSquare)) {
      TPUSIM_RETURN_IF_ERROR(ParseIndexGroup(*this, p));
    } else if (t.is(TokenKind::kLParen)) {
      Advance();
      TPUSIM_RETURN_IF_ERROR(ParsePrettyItems(p));
      TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')'"));
      juxtaposed = true;
    } else if (t.is(TokenKind::kAtId) || t.is(TokenKind::kString)) {
      TPUSIM_ASSIGN_OR_RETURN(ir::Attribute a, ParseAttribute());
      p->literals.push_back(std::move(a));
      juxtaposed = true;
    } else if (t.IsKeyword("dense")) {
      TPUSIM_ASSIGN_OR_RETURN(ir::Attribute a, ParseDenseElements());
      p->literals.push_back(std::move(a));
    } else {
      Advance();
      if (Consume(TokenKind::kEqual)) {
        TPUSIM_ASSIGN_OR_RETURN(ir::Attribute v, ParsePrettyValue(t.text));
        p->keywords.emplace_back(std::string(t.text), std::move(v));
      } else {
        p->idents.emplace_back(t.text);
      }
    }
    if (!Consume(TokenKind::kComma) && !juxtaposed) break;
  }
  return Status::Ok();
}

Status Parser::ParsePrettySignature(PrettyOp* p) {
  TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' and the op's types"));
  p->signature_offset = tok_.offset;
  if (tok_.is(TokenKind::kLParen)) {
    p->functional = true;
    return ParseFunctionType(&p->operand_types, &p->result_types);
  }
  TPUSIM_RETURN_IF_ERROR(ParseTypeList(&p->type_list));
  if (Consume(TokenKind::kArrow)) {  // chlo: `a, b -> c`
    p->functional = true;
    p->operand_types = std::move(p->type_list);
    p->type_list.clear();
    return ParseResultTypes(&p->result_types);
  }
  return Status::Ok();
}

}  // namespace tpusim::frontend

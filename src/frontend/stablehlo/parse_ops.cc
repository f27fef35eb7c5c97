// Operations in the generic form, result lists, regions and blocks.
#include <charconv>

#include "frontend/stablehlo/parser.h"

namespace tpusim::frontend {
namespace {

// `%name` or `%name:N` on the left of '='.
struct ResultGroup {
  std::string name;
  int count = 1;
  size_t offset = 0;
};

constexpr int kMaxResults = 1 << 16;

}  // namespace

// Pops the innermost value scope on every exit path.
class ScopeGuard {
 public:
  explicit ScopeGuard(Parser* p) : p_(p) { p_->PushScope(); }
  ~ScopeGuard() { p_->PopScope(); }

 private:
  Parser* p_;
};

static StatusOr<std::vector<ResultGroup>> ParseResultGroups(Parser& p) {
  std::vector<ResultGroup> groups;
  if (!p.tok().is(TokenKind::kPercentId)) return groups;
  int total = 0;
  do {
    const Token& t = p.tok();
    if (!t.is(TokenKind::kPercentId) || t.text.find('#') != std::string_view::npos) {
      return p.Error("expected a result name");
    }
    ResultGroup g{std::string(t.text.substr(1)), 1, t.offset};
    p.Advance();
    if (p.Consume(TokenKind::kColon)) {
      TPUSIM_ASSIGN_OR_RETURN(int64_t n, p.ParseInt64());
      if (n < 1 || n > kMaxResults) return p.ErrorAt(g.offset, "bad result count");
      g.count = static_cast<int>(n);
    }
    total += g.count;
    if (total > kMaxResults) return p.ErrorAt(g.offset, "too many results");
    groups.push_back(std::move(g));
  } while (p.Consume(TokenKind::kComma));
  TPUSIM_RETURN_IF_ERROR(p.Expect(TokenKind::kEqual, "'=' after the result names"));
  return groups;
}

// `"name"(%a, %b) <{props}> ({regions}) {attrs} : (types) -> types`.
static Status ParseGenericOp(Parser& p, PrettyOp* op) {
  TPUSIM_RETURN_IF_ERROR(p.Expect(TokenKind::kLParen, "'(' before the operands"));
  if (!p.Consume(TokenKind::kRParen)) {
    do {
      TPUSIM_ASSIGN_OR_RETURN(ir::Value v, p.ParseValueUse());
      op->operands.push_back(v);
    } while (p.Consume(TokenKind::kComma));
    TPUSIM_RETURN_IF_ERROR(p.Expect(TokenKind::kRParen, "')' after the operands"));
  }
  if (p.tok().is(TokenKind::kLSquare)) {
    return p.UnimplementedAt(p.tok().offset, "block successors are unsupported");
  }
  if (p.Consume(TokenKind::kLess)) {
    TPUSIM_RETURN_IF_ERROR(p.ParseAttributeDict(&op->op->attrs()));
    TPUSIM_RETURN_IF_ERROR(p.Expect(TokenKind::kGreater, "'>' closing the properties"));
  }
  if (p.Consume(TokenKind::kLParen)) {
    do {
      TPUSIM_RETURN_IF_ERROR(p.ParseRegion(&op->op->AddRegion(), {}));
    } while (p.Consume(TokenKind::kComma));
    TPUSIM_RETURN_IF_ERROR(p.Expect(TokenKind::kRParen, "')' after the regions"));
  }
  if (p.tok().is(TokenKind::kLBrace)) {
    TPUSIM_RETURN_IF_ERROR(p.ParseAttributeDict(&op->op->attrs()));
  }
  TPUSIM_RETURN_IF_ERROR(p.Expect(TokenKind::kColon, "':' and the op's function type"));
  size_t type_offset = p.tok().offset;
  TPUSIM_RETURN_IF_ERROR(p.ParseFunctionType(&op->operand_types, &op->result_types));
  if (op->operand_types.size() != op->operands.size()) {
    return p.ErrorAt(type_offset, "the function type has " +
                                      std::to_string(op->operand_types.size()) +
                                      " operand types for " + std::to_string(op->operands.size()) +
                                      " operands");
  }
  for (size_t i = 0; i < op->operands.size(); ++i) {
    TPUSIM_RETURN_IF_ERROR(p.CheckType(op->operands[i], op->operand_types[i], type_offset));
  }
  return Status::Ok();
}

Status Parser::ParseOperation(ir::Block* block) {
  size_t start = tok_.offset;
  TPUSIM_ASSIGN_OR_RETURN(std::vector<ResultGroup> groups, ParseResultGroups(*this));
  PrettyOp p;
  p.name_offset = tok_.offset;
  std::string name;
  if (tok_.is(TokenKind::kString)) {
    if (!UnescapeString(tok_.text, &name) || name.empty()) return Error("bad operation name");
    p.op = std::make_unique<ir::Operation>(ir::OpName(name), LocationAt(start));
    Advance();
    TPUSIM_RETURN_IF_ERROR(ParseGenericOp(*this, &p));
  } else if (tok_.is(TokenKind::kBareId)) {
    name = std::string(tok_.text);
    // `return` and `call` are func.return and func.call in short form.
    if (name == "return" || name == "call") name = "func." + name;
    p.op = std::make_unique<ir::Operation>(ir::OpName(name), LocationAt(start));
    Advance();
    TPUSIM_RETURN_IF_ERROR(ParsePrettyOp(name, &p));
  } else {
    return Error("expected an operation");
  }
  size_t named = 0;
  for (const ResultGroup& g : groups) named += g.count;
  if (!groups.empty() && named != p.result_types.size()) {
    return ErrorAt(start, "operation defines " + std::to_string(named) + " results but has " +
                              std::to_string(p.result_types.size()));
  }
  p.op->SetOperands(std::move(p.operands));
  size_t next = 0;
  for (const ResultGroup& g : groups) {
    std::vector<ir::Value> values;
    for (int i = 0; i < g.count; ++i, ++next) {
      std::string value_name = g.count == 1 ? g.name : g.name + "#" + std::to_string(i);
      values.push_back(p.op->AddResult(p.result_types[next], std::move(value_name)));
    }
    TPUSIM_RETURN_IF_ERROR(Define(g.name, std::move(values), g.offset));
  }
  for (; next < p.result_types.size(); ++next) p.op->AddResult(p.result_types[next]);
  block->Append(std::move(p.op));
  return Status::Ok();
}

Status Parser::ParseOperations(ir::Block* block) {
  while (!tok_.is(TokenKind::kRBrace)) {
    if (tok_.is(TokenKind::kEof)) return Error("expected '}' before the end of input");
    TPUSIM_RETURN_IF_ERROR(ParseOperation(block));
  }
  return Status::Ok();
}

// `^bb0(%a: t, %b: t):` at a '^'.
static Status ParseBlockHeader(Parser& p, ir::Block* block) {
  p.Advance();  // the label
  if (p.Consume(TokenKind::kLParen) && !p.Consume(TokenKind::kRParen)) {
    do {
      if (!p.tok().is(TokenKind::kPercentId)) return p.Error("expected a block argument");
      Token name = p.tok();
      p.Advance();
      TPUSIM_RETURN_IF_ERROR(p.Expect(TokenKind::kColon, "':' and the argument type"));
      TPUSIM_ASSIGN_OR_RETURN(ir::Type t, p.ParseType());
      std::string n(name.text.substr(1));
      ir::Value v = block->AddArgument(std::move(t), n);
      TPUSIM_RETURN_IF_ERROR(p.Define(n, {v}, name.offset));
    } while (p.Consume(TokenKind::kComma));
    TPUSIM_RETURN_IF_ERROR(p.Expect(TokenKind::kRParen, "')' after the block arguments"));
  }
  return p.Expect(TokenKind::kColon, "':' after the block label");
}

Status Parser::ParseRegion(ir::Region* region,
                           const std::vector<std::pair<std::string, ir::Type>>& entry_args) {
  TPUSIM_NESTING_GUARD(this);
  TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kLBrace, "'{' starting a region"));
  ScopeGuard scope(this);
  ir::Block* block = nullptr;
  if (!entry_args.empty() || !(tok_.is(TokenKind::kCaretId) || tok_.is(TokenKind::kRBrace))) {
    block = &region->AddBlock();
    for (const auto& [name, type] : entry_args) {
      ir::Value v = block->AddArgument(type, name);
      TPUSIM_RETURN_IF_ERROR(Define(name, {v}, tok_.offset));
    }
  }
  for (;;) {
    if (tok_.is(TokenKind::kCaretId)) {
      if (block != nullptr && block->ops().empty() && !entry_args.empty()) {
        return Error("this region's arguments are declared before it; no block label expected");
      }
      block = &region->AddBlock();
      TPUSIM_RETURN_IF_ERROR(ParseBlockHeader(*this, block));
      continue;
    }
    if (Consume(TokenKind::kRBrace)) return Status::Ok();
    if (tok_.is(TokenKind::kEof)) return Error("expected '}' closing the region");
    TPUSIM_RETURN_IF_ERROR(ParseOperation(block));
  }
}

}  // namespace tpusim::frontend

// Pretty forms with a grammar of their own, built into the generic form's
// operands, attributes and regions:
//   stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [1] : ...
//   stablehlo.reduce(%x init: %c) across dimensions = [1] : ... reducer(%a: t, %b: t) {...}
//   stablehlo.while(%iterArg = %0) : t cond {...} do {...}
//   chlo.scan(%x) inits(%c) dimension=0 {...} : (...) -> (...)
//   sdy.manual_computation(%x) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[...]
//       manual_axes={"x"} (%arg1: t) {...} : (...) -> (...)
//   sdy.sharding_constraint %x <@mesh, [{"x"}, {}]> : t    (and sdy.reshard)
#include "frontend/stablehlo/parser.h"

namespace tpusim::frontend {
namespace {

using Args = std::vector<std::pair<std::string, ir::Type>>;

// `(%x: t, %y: t)` block arguments written outside their region.
Status ParseArgGroup(Parser& p, Args* args) {
  TPUSIM_RETURN_IF_ERROR(p.Expect(TokenKind::kLParen, "'('"));
  if (p.Consume(TokenKind::kRParen)) return Status::Ok();
  do {
    if (!p.tok().is(TokenKind::kPercentId)) return p.Error("expected an argument name");
    std::string name(p.tok().text.substr(1));
    p.Advance();
    TPUSIM_RETURN_IF_ERROR(p.Expect(TokenKind::kColon, "':'"));
    TPUSIM_ASSIGN_OR_RETURN(ir::Type t, p.ParseType());
    args->emplace_back(std::move(name), std::move(t));
  } while (p.Consume(TokenKind::kComma));
  return p.Expect(TokenKind::kRParen, "')'");
}

// The body `applies stablehlo.add` stands for: one binary op on scalars.
Status BuildAppliedRegion(Parser& p, PrettyOp* op, const std::string& body_op,
                          const ir::Type& scalar, size_t offset) {
  ir::Location loc = p.LocationAt(offset);
  ir::Block& block = op->op->AddRegion().AddBlock();
  ir::Value lhs = block.AddArgument(scalar, "lhs");
  ir::Value rhs = block.AddArgument(scalar, "rhs");
  auto apply = std::make_unique<ir::Operation>(ir::OpName(body_op), loc);
  apply->SetOperands({lhs, rhs});
  ir::Value result = apply->AddResult(scalar);
  block.Append(std::move(apply));
  auto ret = std::make_unique<ir::Operation>(ir::OpName("stablehlo.return"), loc);
  ret->SetOperands({result});
  block.Append(std::move(ret));
  return Status::Ok();
}

Status CheckOperandTypes(Parser& p, PrettyOp* op) {
  if (op->operand_types.size() != op->operands.size()) {
    return p.ErrorAt(op->signature_offset, "expected " + std::to_string(op->operands.size()) +
                                               " operand types");
  }
  for (size_t i = 0; i < op->operands.size(); ++i) {
    TPUSIM_RETURN_IF_ERROR(p.CheckType(op->operands[i], op->operand_types[i], op->signature_offset));
  }
  return Status::Ok();
}

}  // namespace

Status Parser::ParseReduce(PrettyOp* op) {
  std::vector<ir::Value> inputs, inits;
  do {
    TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'(' in reduce"));
    TPUSIM_ASSIGN_OR_RETURN(ir::Value input, ParseValueUse());
    TPUSIM_RETURN_IF_ERROR(ExpectKeyword("init"));
    TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':'"));
    TPUSIM_ASSIGN_OR_RETURN(ir::Value init, ParseValueUse());
    TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')'"));
    inputs.push_back(input);
    inits.push_back(init);
  } while (Consume(TokenKind::kComma));
  op->operands = inputs;
  op->operands.insert(op->operands.end(), inits.begin(), inits.end());
  std::string applied;
  size_t applied_offset = tok_.offset;
  if (ConsumeKeyword("applies")) {
    if (!tok_.is(TokenKind::kBareId)) return Error("expected an op name after 'applies'");
    applied = std::string(tok_.text);
    Advance();
  }
  TPUSIM_RETURN_IF_ERROR(ExpectKeyword("across"));
  TPUSIM_RETURN_IF_ERROR(ExpectKeyword("dimensions"));
  TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'='"));
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ParseIntList());
  op->op->attrs().Set("dimensions", ir::Attribute::DenseArray(ir::ElementType::kSI64, dims));
  if (tok_.is(TokenKind::kLBrace)) TPUSIM_RETURN_IF_ERROR(ParseAttributeDict(&op->op->attrs()));
  TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' and the reduce's types"));
  op->signature_offset = tok_.offset;
  TPUSIM_RETURN_IF_ERROR(ParseFunctionType(&op->operand_types, &op->result_types));
  TPUSIM_RETURN_IF_ERROR(CheckOperandTypes(*this, op));
  if (!applied.empty()) {
    if (inputs.size() != 1) {
      return ErrorAt(applied_offset, "'applies' needs exactly one input");
    }
    const ir::Type& init_type = inits[0].type();
    if (!init_type.is_tensor()) return ErrorAt(applied_offset, "reduce init must be a tensor");
    return BuildAppliedRegion(*this, op, applied, ir::Type::Tensor(init_type.element(), {}),
                              applied_offset);
  }
  // reducer(%a: t, %b: t) (%c: t, %d: t) {...}: group i holds arguments i and i+N.
  TPUSIM_RETURN_IF_ERROR(ExpectKeyword("reducer"));
  Args lhs, rhs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Args pair;
    size_t offset = tok_.offset;
    TPUSIM_RETURN_IF_ERROR(ParseArgGroup(*this, &pair));
    if (pair.size() != 2) return ErrorAt(offset, "each reducer group has two arguments");
    lhs.push_back(pair[0]);
    rhs.push_back(pair[1]);
  }
  lhs.insert(lhs.end(), rhs.begin(), rhs.end());
  return ParseRegion(&op->op->AddRegion(), lhs);
}

Status Parser::ParseWhile(PrettyOp* op) {
  TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'(' in while"));
  std::vector<std::string> names;
  if (!Consume(TokenKind::kRParen)) {
    do {
      if (!tok_.is(TokenKind::kPercentId)) return Error("expected %name = %value");
      names.emplace_back(tok_.text.substr(1));
      Advance();
      TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'='"));
      TPUSIM_ASSIGN_OR_RETURN(ir::Value v, ParseValueUse());
      op->operands.push_back(v);
    } while (Consume(TokenKind::kComma));
    TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')'"));
  }
  if (tok_.is(TokenKind::kLBrace)) TPUSIM_RETURN_IF_ERROR(ParseAttributeDict(&op->op->attrs()));
  if (!names.empty()) {
    TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' and the loop-carried types"));
    op->signature_offset = tok_.offset;
    TPUSIM_RETURN_IF_ERROR(ParseTypeList(&op->operand_types));
  }
  TPUSIM_RETURN_IF_ERROR(CheckOperandTypes(*this, op));
  op->result_types = op->operand_types;
  Args args;
  for (size_t i = 0; i < names.size(); ++i) args.emplace_back(names[i], op->operand_types[i]);
  TPUSIM_RETURN_IF_ERROR(ExpectKeyword("cond"));
  TPUSIM_RETURN_IF_ERROR(ParseRegion(&op->op->AddRegion(), args));
  TPUSIM_RETURN_IF_ERROR(ExpectKeyword("do"));
  return ParseRegion(&op->op->AddRegion(), args);
}

Status Parser::ParseScan(PrettyOp* op) {
  auto value_group = [this, op]() -> StatusOr<int> {
    TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'('"));
    int count = 0;
    if (Consume(TokenKind::kRParen)) return count;
    do {
      TPUSIM_ASSIGN_OR_RETURN(ir::Value v, ParseValueUse());
      op->operands.push_back(v);
      ++count;
    } while (Consume(TokenKind::kComma));
    TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')'"));
    return count;
  };
  TPUSIM_ASSIGN_OR_RETURN(int num_inputs, value_group());
  TPUSIM_RETURN_IF_ERROR(ExpectKeyword("inits"));
  TPUSIM_ASSIGN_OR_RETURN(int num_inits, value_group());
  while (tok_.is(TokenKind::kBareId)) {
    if (ConsumeKeyword("attributes")) {
      TPUSIM_RETURN_IF_ERROR(ParseAttributeDict(&op->op->attrs()));
      continue;
    }
    std::string key(tok_.text);
    Advance();
    TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'='"));
    TPUSIM_ASSIGN_OR_RETURN(ir::Attribute value, ParsePrettyValue(key));
    op->op->attrs().Set(std::move(key), std::move(value));
    Consume(TokenKind::kComma);
  }
  TPUSIM_RETURN_IF_ERROR(ParseRegion(&op->op->AddRegion(), {}));
  if (tok_.is(TokenKind::kLBrace)) TPUSIM_RETURN_IF_ERROR(ParseAttributeDict(&op->op->attrs()));
  TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' and the scan's types"));
  op->signature_offset = tok_.offset;
  TPUSIM_RETURN_IF_ERROR(ParseFunctionType(&op->operand_types, &op->result_types));
  TPUSIM_RETURN_IF_ERROR(CheckOperandTypes(*this, op));
  int num_results = static_cast<int>(op->result_types.size());
  if (num_results < num_inits) return ErrorAt(op->signature_offset, "scan has too few results");
  op->op->attrs().Set("operandSegmentSizes",
                      ir::Attribute::DenseArray(ir::ElementType::kSI32, {num_inputs, num_inits}));
  op->op->attrs().Set("resultSegmentSizes", ir::Attribute::DenseArray(
                                                ir::ElementType::kSI32,
                                                {num_results - num_inits, num_inits}));
  return Status::Ok();
}

Status Parser::ParseManualComputation(PrettyOp* op) {
  TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'(' in manual_computation"));
  if (!Consume(TokenKind::kRParen)) {
    do {
      TPUSIM_ASSIGN_OR_RETURN(ir::Value v, ParseValueUse());
      op->operands.push_back(v);
    } while (Consume(TokenKind::kComma));
    TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')'"));
  }
  for (const char* key : {"in_shardings", "out_shardings"}) {
    TPUSIM_RETURN_IF_ERROR(ExpectKeyword(key));
    TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'='"));
    TPUSIM_ASSIGN_OR_RETURN(ir::Attribute shardings, ParseSdyShardingList());
    op->op->attrs().Set(key, std::move(shardings));
  }
  TPUSIM_RETURN_IF_ERROR(ExpectKeyword("manual_axes"));
  TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'='"));
  TPUSIM_ASSIGN_OR_RETURN(ir::Attribute axes, ParseSdyAxisSet());
  op->op->attrs().Set("manual_axes", std::move(axes));
  Args args;
  TPUSIM_RETURN_IF_ERROR(ParseArgGroup(*this, &args));
  TPUSIM_RETURN_IF_ERROR(ParseRegion(&op->op->AddRegion(), args));
  if (tok_.is(TokenKind::kLBrace)) TPUSIM_RETURN_IF_ERROR(ParseAttributeDict(&op->op->attrs()));
  TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' and the manual computation's types"));
  op->signature_offset = tok_.offset;
  TPUSIM_RETURN_IF_ERROR(ParseFunctionType(&op->operand_types, &op->result_types));
  return CheckOperandTypes(*this, op);
}

Status Parser::ParseSdyConstraint(PrettyOp* op) {
  TPUSIM_ASSIGN_OR_RETURN(ir::Value v, ParseValueUse());
  op->operands.push_back(v);
  TPUSIM_ASSIGN_OR_RETURN(ir::Attribute sharding, ParseSdyShardingBrackets());
  op->op->attrs().Set("sharding", std::move(sharding));
  if (tok_.is(TokenKind::kLBrace)) TPUSIM_RETURN_IF_ERROR(ParseAttributeDict(&op->op->attrs()));
  TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' and the value's type"));
  op->signature_offset = tok_.offset;
  TPUSIM_ASSIGN_OR_RETURN(ir::Type t, ParseType());
  op->operand_types = {t};
  op->result_types = {t};
  return CheckOperandTypes(*this, op);
}

}  // namespace tpusim::frontend

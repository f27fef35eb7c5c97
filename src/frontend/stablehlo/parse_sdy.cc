// Shardy's attributes in their own syntax, as JAX prints them (the pretty
// and the generic op forms use the same attribute syntax):
//   #sdy.mesh<["x"=2, "y"=4], device_ids=[...]>       (also `sdy.mesh @m = <...>`)
//   #sdy.sharding<@mesh, [{"x", ?}, {"y":(1)2}p1], replicated={"z"}, unreduced={"w"}>
//   #sdy.sharding<mesh<["x"=2]>, [{"x"}]>             (an inline mesh)
//   #sdy.sharding_per_value<[<@mesh, [...]>, ...]>
//   #sdy.op_sharding_rule<([i, j], [j, k])->([i, k]) {i=8, j=16, k=4} reduction={j}>
//   #sdy<manual_axes{"x", "y"}>
// The IR keeps them as kStruct attributes whose fields tpusim/ir/sharding.h
// reads; they print back as written.
#include "frontend/stablehlo/parser.h"

namespace tpusim::frontend {
namespace {

bool IsPriority(std::string_view word) {
  if (word.size() < 2 || word[0] != 'p') return false;
  if (word.size() > 2 && word[1] == '0') return false;  // Shardy forbids leading zeros
  for (char c : word.substr(1)) {
    if (c < '0' || c > '9') return false;
  }
  return word.size() <= 18;  // fits int64
}

// Factor names up to `close` (the opening bracket read): `i, j]`.
StatusOr<ir::Attribute> ParseFactorNames(Parser& p, TokenKind close, std::string_view expected) {
  std::vector<ir::Attribute> names;
  while (!p.Consume(close)) {
    if (!p.tok().is(TokenKind::kBareId)) return p.Error("expected a factor name");
    names.push_back(ir::Attribute::String(std::string(p.tok().text)));
    p.Advance();
    if (!p.Consume(TokenKind::kComma) && !p.tok().is(close)) return p.Error(expected);
  }
  return ir::Attribute::Array(std::move(names));
}

}  // namespace

// `"x"`, or the sub-axis `"x":(2)4` (pre-size 2, size 4): a "sdy.sub_axis"
// struct with fields name, pre_size and size.
StatusOr<ir::Attribute> Parser::ParseSdyAxisRef() {
  if (!tok_.is(TokenKind::kString)) return Error("expected a mesh axis name");
  TPUSIM_ASSIGN_OR_RETURN(ir::Attribute axis, ParseAttribute());
  if (!Consume(TokenKind::kColon)) return axis;
  size_t offset = tok_.offset;
  TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'(' and the sub-axis pre-size"));
  TPUSIM_ASSIGN_OR_RETURN(int64_t pre_size, ParseInt64());
  TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')'"));
  TPUSIM_ASSIGN_OR_RETURN(int64_t size, ParseInt64());
  if (pre_size < 1 || size < 1) return ErrorAt(offset, "sub-axis sizes must be positive");
  return ir::Attribute::Struct("sdy.sub_axis", {{"name", axis},
                                                {"pre_size", ir::Attribute::Int(pre_size)},
                                                {"size", ir::Attribute::Int(size)}});
}

// `{"x", "y":(1)2}` after the '{' is read; with `open`, a trailing `?` is
// allowed and reported.
StatusOr<ir::Attribute> Parser::ParseSdyAxisList(bool* open) {
  std::vector<ir::Attribute> axes;
  if (open != nullptr) *open = false;
  while (!Consume(TokenKind::kRBrace)) {
    if (open != nullptr && Consume(TokenKind::kQuestion)) {
      *open = true;  // may be sharded further; `?` comes last
      TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kRBrace, "'}' after '?'"));
      break;
    }
    TPUSIM_ASSIGN_OR_RETURN(ir::Attribute axis, ParseSdyAxisRef());
    axes.push_back(std::move(axis));
    if (!Consume(TokenKind::kComma) && !tok_.is(TokenKind::kRBrace)) {
      return Error("expected ',' or '}'");
    }
  }
  return ir::Attribute::Array(std::move(axes));
}

// `["x"=2, "y"=4], device_ids=[...]>` after the '<': a "sdy.mesh" struct
// with fields axis_names, axis_sizes and (when given) device_ids.
StatusOr<ir::Attribute> Parser::ParseSdyMeshBody() {
  TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kLSquare, "'[' starting the mesh axes"));
  std::vector<ir::Attribute> names, sizes;
  if (!Consume(TokenKind::kRSquare)) {
    do {
      if (!tok_.is(TokenKind::kString)) return Error("expected an axis name");
      TPUSIM_ASSIGN_OR_RETURN(ir::Attribute axis, ParseAttribute());
      TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'='"));
      TPUSIM_ASSIGN_OR_RETURN(int64_t size, ParseInt64());
      if (size < 1) return Error("mesh axis sizes must be positive");
      names.push_back(std::move(axis));
      sizes.push_back(ir::Attribute::Int(size));
    } while (Consume(TokenKind::kComma));
    TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kRSquare, "']'"));
  }
  std::vector<ir::NamedAttribute> fields = {{"axis_names", ir::Attribute::Array(names)},
                                            {"axis_sizes", ir::Attribute::Array(sizes)}};
  if (Consume(TokenKind::kComma)) {
    TPUSIM_RETURN_IF_ERROR(ExpectKeyword("device_ids"));
    TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'='"));
    TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> ids, ParseIntList());
    std::vector<ir::Attribute> id_attrs;
    for (int64_t id : ids) id_attrs.push_back(ir::Attribute::Int(id));
    fields.emplace_back("device_ids", ir::Attribute::Array(std::move(id_attrs)));
  }
  TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kGreater, "'>' closing the mesh"));
  return ir::Attribute::Struct("sdy.mesh", std::move(fields));
}

// `@mesh, [{"x"}, {"y", ?}p1], replicated={"z"}>` after the '<': fields mesh
// (a symbol, or an inline "sdy.mesh"), dims (the axes of each dimension),
// open (the dimensions marked `?`), priorities (per dimension, -1 for none),
// replicated, unreduced and unreduced_kind ("max"/"min" when not a sum);
// the optional ones only when written.
StatusOr<ir::Attribute> Parser::ParseSdyShardingBody() {
  ir::Attribute mesh;
  if (ConsumeKeyword("mesh")) {
    TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kLess, "'<' starting the inline mesh"));
    TPUSIM_ASSIGN_OR_RETURN(mesh, ParseSdyMeshBody());
  } else if (tok_.is(TokenKind::kAtId)) {
    TPUSIM_ASSIGN_OR_RETURN(mesh, ParseAttribute());
  } else {
    return Error("expected a mesh (@name or mesh<[...]>)");
  }
  TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kComma, "','"));
  TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kLSquare, "'['"));
  std::vector<ir::Attribute> dims, open_dims, priorities;
  bool any_priority = false;
  if (!Consume(TokenKind::kRSquare)) {
    do {
      TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kLBrace, "'{'"));
      bool open = false;
      TPUSIM_ASSIGN_OR_RETURN(ir::Attribute d, ParseSdyAxisList(&open));
      if (open) open_dims.push_back(ir::Attribute::Int(static_cast<int64_t>(dims.size())));
      int64_t priority = -1;
      if (tok_.is(TokenKind::kBareId)) {
        if (!IsPriority(tok_.text)) {
          return Error("expected a priority p<N>, found '" + std::string(tok_.text) + "'");
        }
        priority = std::stoll(std::string(tok_.text.substr(1)));
        any_priority = true;
        Advance();
      }
      priorities.push_back(ir::Attribute::Int(priority));
      dims.push_back(std::move(d));
    } while (Consume(TokenKind::kComma));
    TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kRSquare, "']'"));
  }
  std::vector<ir::NamedAttribute> fields = {{"mesh", mesh}, {"dims", ir::Attribute::Array(dims)}};
  if (!open_dims.empty()) fields.emplace_back("open", ir::Attribute::Array(std::move(open_dims)));
  if (any_priority) fields.emplace_back("priorities", ir::Attribute::Array(std::move(priorities)));
  bool replicated = false, unreduced = false;
  while (Consume(TokenKind::kComma)) {
    size_t offset = tok_.offset;
    if (!replicated && ConsumeKeyword("replicated")) {
      replicated = true;
      TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'='"));
      TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kLBrace, "'{'"));
      TPUSIM_ASSIGN_OR_RETURN(ir::Attribute axes, ParseSdyAxisList(nullptr));
      fields.emplace_back("replicated", std::move(axes));
    } else if (!unreduced && ConsumeKeyword("unreduced")) {
      unreduced = true;
      TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'='"));
      for (const char* kind : {"max", "min"}) {
        if (ConsumeKeyword(kind))
          fields.emplace_back("unreduced_kind", ir::Attribute::String(kind));
      }
      TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kLBrace, "'{'"));
      TPUSIM_ASSIGN_OR_RETURN(ir::Attribute axes, ParseSdyAxisList(nullptr));
      fields.emplace_back("unreduced", std::move(axes));
    } else {
      return ErrorAt(offset, "expected 'replicated={...}' or 'unreduced={...}'");
    }
  }
  TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kGreater, "'>'"));
  return ir::Attribute::Struct("sdy.sharding", std::move(fields));
}

// `([i, j], [j, k])->([i, k]) {i=8, j=16, k=32} reduction={j}, custom>`
// after the '<': fields operands and results (per value, per dimension the
// factors as written, "ij" for a compound dimension), factor_sizes, the
// special factor lists present and custom.
StatusOr<ir::Attribute> Parser::ParseSdyRuleBody() {
  auto parse_values = [this]() -> StatusOr<ir::Attribute> {
    TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'('"));
    std::vector<ir::Attribute> values;
    while (!Consume(TokenKind::kRParen)) {
      TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kLSquare, "'['"));
      TPUSIM_ASSIGN_OR_RETURN(ir::Attribute dims,
                              ParseFactorNames(*this, TokenKind::kRSquare, "expected ',' or ']'"));
      values.push_back(std::move(dims));
      if (!Consume(TokenKind::kComma) && !tok_.is(TokenKind::kRParen)) {
        return Error("expected ',' or ')'");
      }
    }
    return ir::Attribute::Array(std::move(values));
  };
  TPUSIM_ASSIGN_OR_RETURN(ir::Attribute operands, parse_values());
  TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kArrow, "'->'"));
  TPUSIM_ASSIGN_OR_RETURN(ir::Attribute results, parse_values());
  std::vector<ir::NamedAttribute> sizes;
  if (Consume(TokenKind::kLBrace)) {
    while (!Consume(TokenKind::kRBrace)) {
      if (!tok_.is(TokenKind::kBareId)) return Error("expected a factor name");
      std::string name(tok_.text);
      Advance();
      TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'='"));
      TPUSIM_ASSIGN_OR_RETURN(int64_t size, ParseInt64());
      sizes.emplace_back(std::move(name), ir::Attribute::Int(size));
      if (!Consume(TokenKind::kComma) && !tok_.is(TokenKind::kRBrace)) {
        return Error("expected ',' or '}'");
      }
    }
  }
  std::vector<ir::NamedAttribute> fields = {
      {"operands", operands}, {"results", results}, {"factor_sizes", ir::Attribute::Dict(sizes)}};
  for (const char* key : {"reduction", "need_replication", "blocked_propagation", "permutation"}) {
    if (!ConsumeKeyword(key)) continue;
    TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'='"));
    TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kLBrace, "'{'"));
    TPUSIM_ASSIGN_OR_RETURN(ir::Attribute names,
                            ParseFactorNames(*this, TokenKind::kRBrace, "expected ',' or '}'"));
    fields.emplace_back(key, std::move(names));
  }
  if (Consume(TokenKind::kComma)) {
    TPUSIM_RETURN_IF_ERROR(ExpectKeyword("custom"));
    fields.emplace_back("custom", ir::Attribute::Unit());
  }
  TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kGreater, "'>'"));
  return ir::Attribute::Struct("sdy.op_sharding_rule", std::move(fields));
}

StatusOr<ir::Attribute> Parser::ParseSdyAxisSet() {
  TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kLBrace, "'{'"));
  std::vector<ir::Attribute> axes;
  if (!Consume(TokenKind::kRBrace)) {
    do {
      if (!tok_.is(TokenKind::kString)) return Error("expected a mesh axis name");
      TPUSIM_ASSIGN_OR_RETURN(ir::Attribute axis, ParseAttribute());
      axes.push_back(std::move(axis));
    } while (Consume(TokenKind::kComma));
    TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kRBrace, "'}'"));
  }
  return ir::Attribute::Struct("sdy.manual_axes",
                               {{"axes", ir::Attribute::Array(std::move(axes))}});
}

StatusOr<ir::Attribute> Parser::ParseSdyShardingBrackets() {
  TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kLess, "'<'"));
  return ParseSdyShardingBody();
}

StatusOr<ir::Attribute> Parser::ParseSdyShardingList() {
  TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kLSquare, "'['"));
  std::vector<ir::Attribute> shardings;
  if (!Consume(TokenKind::kRSquare)) {
    do {
      TPUSIM_ASSIGN_OR_RETURN(ir::Attribute s, ParseSdyShardingBrackets());
      shardings.push_back(std::move(s));
    } while (Consume(TokenKind::kComma));
    TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kRSquare, "']'"));
  }
  return ir::Attribute::Struct("sdy.sharding_per_value",
                               {{"shardings", ir::Attribute::Array(std::move(shardings))}});
}

}  // namespace tpusim::frontend

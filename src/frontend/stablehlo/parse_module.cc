// Modules, functions, sdy meshes, and the public entry points.
#include "frontend/stablehlo/parser.h"
#include "tpusim/frontend/stablehlo/parser.h"

namespace tpusim::frontend {
namespace {

// Arguments in a func.func signature: `%arg0: tensor<f32> {attrs}`.
struct Param {
  std::string name;
  ir::Type type;
  ir::AttributeMap attrs;
  size_t offset = 0;
};

Status ParseParams(Parser& p, std::vector<Param>* params) {
  TPUSIM_RETURN_IF_ERROR(p.Expect(TokenKind::kLParen, "'(' starting the parameters"));
  if (p.Consume(TokenKind::kRParen)) return Status::Ok();
  do {
    Param param;
    param.offset = p.tok().offset;
    if (!p.tok().is(TokenKind::kPercentId)) {
      return p.UnimplementedAt(param.offset, "function declarations without a body are unsupported");
    }
    param.name = std::string(p.tok().text.substr(1));
    p.Advance();
    TPUSIM_RETURN_IF_ERROR(p.Expect(TokenKind::kColon, "':' and the parameter type"));
    TPUSIM_ASSIGN_OR_RETURN(param.type, p.ParseType());
    if (p.tok().is(TokenKind::kLBrace)) TPUSIM_RETURN_IF_ERROR(p.ParseAttributeDict(&param.attrs));
    params->push_back(std::move(param));
  } while (p.Consume(TokenKind::kComma));
  return p.Expect(TokenKind::kRParen, "')' after the parameters");
}

// `-> t`, `-> (t {attrs}, t)`.
Status ParseResults(Parser& p, std::vector<ir::Type>* types, std::vector<ir::AttributeMap>* attrs) {
  if (!p.Consume(TokenKind::kArrow)) return Status::Ok();
  bool paren = p.Consume(TokenKind::kLParen);
  if (paren && p.Consume(TokenKind::kRParen)) return Status::Ok();
  do {
    TPUSIM_ASSIGN_OR_RETURN(ir::Type t, p.ParseType());
    types->push_back(std::move(t));
    attrs->emplace_back();
    if (paren && p.tok().is(TokenKind::kLBrace)) {
      TPUSIM_RETURN_IF_ERROR(p.ParseAttributeDict(&attrs->back()));
    }
  } while (paren && p.Consume(TokenKind::kComma));
  return paren ? p.Expect(TokenKind::kRParen, "')' after the result types") : Status::Ok();
}

bool IsGenericMesh(const Token& t) {
  return t.is(TokenKind::kString) && t.text == "\"sdy.mesh\"";
}

// JAX's ApproxTopK comparator is a func.func that ends in stablehlo.return
// (XLA accepts either); it becomes func.return, the terminator a function has.
void NormalizeReturn(ir::Block& entry) {
  ir::Operation* ret = entry.terminator();
  if (ret == nullptr || ret->name_str() != "stablehlo.return") return;
  std::vector<std::unique_ptr<ir::Operation>> ops = entry.TakeOps();
  auto func_return = std::make_unique<ir::Operation>(ir::OpName("func.return"), ret->loc());
  func_return->SetOperands(ret->operands());
  ops.back() = std::move(func_return);
  for (auto& op : ops) entry.Append(std::move(op));
}

void SetMesh(ir::Module* module, const std::string& name, ir::Attribute mesh) {
  std::vector<ir::NamedAttribute> meshes;
  if (ir::Attribute old = module->attrs().Get("sdy.meshes")) meshes = old.fields();
  meshes.emplace_back(name, std::move(mesh));
  module->attrs().Set("sdy.meshes", ir::Attribute::Dict(std::move(meshes)));
}

}  // namespace

Status Parser::ParseFunction(ir::Module* module) {
  size_t start = tok_.offset;
  TPUSIM_RETURN_IF_ERROR(ExpectKeyword("func.func"));
  bool is_public = true;
  if (ConsumeKeyword("private")) is_public = false;
  else if (!ConsumeKeyword("public")) ConsumeKeyword("nested");
  if (!tok_.is(TokenKind::kAtId)) return Error("expected the function name (@name)");
  TPUSIM_ASSIGN_OR_RETURN(ir::Attribute sym, ParseAttribute());
  const std::string& name = sym.str();
  if (module->Lookup(name) != nullptr) {
    return ErrorAt(start, "redefinition of function @" + name);
  }
  std::vector<Param> params;
  TPUSIM_RETURN_IF_ERROR(ParseParams(*this, &params));
  ir::FunctionType type;
  for (const Param& param : params) type.inputs.push_back(param.type);
  std::vector<ir::AttributeMap> result_attrs;
  TPUSIM_RETURN_IF_ERROR(ParseResults(*this, &type.results, &result_attrs));
  auto f = std::make_unique<ir::Function>(name, std::move(type), LocationAt(start));
  f->set_public(is_public);
  for (size_t i = 0; i < params.size(); ++i) f->arg_attrs()[i] = std::move(params[i].attrs);
  f->result_attrs() = std::move(result_attrs);
  if (ConsumeKeyword("attributes")) TPUSIM_RETURN_IF_ERROR(ParseAttributeDict(&f->attrs()));
  if (!tok_.is(TokenKind::kLBrace)) {
    return UnimplementedAt(tok_.offset, "function declarations without a body are unsupported");
  }
  std::vector<std::pair<std::string, ir::Type>> args;
  for (const Param& param : params) args.emplace_back(param.name, param.type);
  // Entry arguments are defined in the body's scope; check duplicates here
  // since the region defines them all at the region's offset.
  for (size_t i = 0; i < params.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (params[i].name == params[j].name) {
        return ErrorAt(params[i].offset, "redefinition of SSA value %" + params[i].name);
      }
    }
  }
  TPUSIM_RETURN_IF_ERROR(ParseRegion(&f->body(), args));
  if (f->body().empty()) f->body().AddBlock();
  NormalizeReturn(f->body().front());
  f->Renumber();
  module->AddFunction(std::move(f));
  return Status::Ok();
}

// `sdy.mesh @name = <["x"=2, "y"=4]>` (optionally `, device_ids=[...]`), or
// its generic form `"sdy.mesh"() <{mesh = #sdy.mesh<[...]>, sym_name = "name"}>
// : () -> ()`.
Status Parser::ParseMesh(ir::Module* module) {
  size_t start = tok_.offset;
  if (tok_.is(TokenKind::kString)) {
    Advance();
    TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'('"));
    TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')': sdy.mesh has no operands"));
    ir::AttributeMap props;
    TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kLess, "'<' and the mesh's properties"));
    TPUSIM_RETURN_IF_ERROR(ParseAttributeDict(&props));
    TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kGreater, "'>'"));
    if (tok_.is(TokenKind::kLBrace)) TPUSIM_RETURN_IF_ERROR(ParseAttributeDict(&props));
    TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':'"));
    std::vector<ir::Type> inputs, results;
    TPUSIM_RETURN_IF_ERROR(ParseFunctionType(&inputs, &results));
    ir::Attribute mesh = props.Get("mesh");
    ir::Attribute name = props.Get("sym_name");
    if (mesh.kind() != ir::Attribute::Kind::kStruct || mesh.name() != "sdy.mesh" ||
        name.kind() != ir::Attribute::Kind::kString || !inputs.empty() || !results.empty()) {
      return ErrorAt(start, "sdy.mesh needs mesh = #sdy.mesh<...> and sym_name, and no values");
    }
    SetMesh(module, name.str(), mesh);
    return Status::Ok();
  }
  TPUSIM_RETURN_IF_ERROR(ExpectKeyword("sdy.mesh"));
  if (!tok_.is(TokenKind::kAtId)) return Error("expected the mesh name");
  TPUSIM_ASSIGN_OR_RETURN(ir::Attribute sym, ParseAttribute());
  TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'='"));
  TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kLess, "'<'"));
  TPUSIM_ASSIGN_OR_RETURN(ir::Attribute mesh, ParseSdyMeshBody());
  SetMesh(module, sym.str(), std::move(mesh));
  return Status::Ok();
}

Status Parser::ParseModuleBody(ir::Module* module) {
  TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kLBrace, "'{' starting the module body"));
  for (;;) {
    if (Consume(TokenKind::kRBrace)) return Status::Ok();
    if (tok_.IsKeyword("func.func")) {
      TPUSIM_RETURN_IF_ERROR(ParseFunction(module));
    } else if (tok_.IsKeyword("sdy.mesh") || IsGenericMesh(tok_)) {
      TPUSIM_RETURN_IF_ERROR(ParseMesh(module));
    } else if (tok_.IsKeyword("module")) {
      return UnimplementedAt(tok_.offset, "nested modules are unsupported");
    } else if (tok_.is(TokenKind::kEof)) {
      return Error("expected '}' closing the module");
    } else {
      return Error("expected func.func in the module body");
    }
  }
}

StatusOr<std::unique_ptr<ir::Module>> Parser::ParseTopLevel() {
  auto module = std::make_unique<ir::Module>();
  bool saw_module = false;
  bool saw_function = false;
  for (;;) {
    if (tok_.is(TokenKind::kEof)) break;
    if ((tok_.is(TokenKind::kHashId) || tok_.is(TokenKind::kBangId))) {
      TPUSIM_RETURN_IF_ERROR(ParseAliasDefinition());
    } else if (Consume(TokenKind::kFileMetadataBegin)) {
      // `{-# dialect_resources ... #-}`: only dense_resource uses it.
      while (!tok_.is(TokenKind::kFileMetadataEnd) && !tok_.is(TokenKind::kEof)) Advance();
      TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kFileMetadataEnd, "'#-}'"));
    } else if (tok_.IsKeyword("module")) {
      if (saw_module || saw_function) {
        return Error("only one module (or top-level functions) per input");
      }
      saw_module = true;
      Advance();
      if (tok_.is(TokenKind::kAtId)) {
        TPUSIM_ASSIGN_OR_RETURN(ir::Attribute sym, ParseAttribute());
        module->set_name(sym.str());
      }
      if (ConsumeKeyword("attributes")) TPUSIM_RETURN_IF_ERROR(ParseAttributeDict(&module->attrs()));
      TPUSIM_RETURN_IF_ERROR(ParseModuleBody(module.get()));
    } else if (tok_.IsKeyword("func.func")) {
      if (saw_module) return Error("functions after the module");
      saw_function = true;
      TPUSIM_RETURN_IF_ERROR(ParseFunction(module.get()));
    } else if ((tok_.IsKeyword("sdy.mesh") || IsGenericMesh(tok_)) && !saw_module) {
      TPUSIM_RETURN_IF_ERROR(ParseMesh(module.get()));
    } else if (tok_.is(TokenKind::kError)) {
      return Error("unexpected character");
    } else {
      return Error("expected a module or func.func");
    }
  }
  if (UsesSdyRoundTrip(*module)) TPUSIM_RETURN_IF_ERROR(ImportSdyRoundTrip(*module));
  return module;  // empty input is an empty module, as in MLIR
}

}  // namespace tpusim::frontend

namespace tpusim::frontend {

StatusOr<std::unique_ptr<ir::Module>> ParseStableHlo(std::string_view text,
                                                     const std::string& filename) {
  Parser parser(text, 0, text.size(), std::make_shared<const std::string>(filename));
  return parser.ParseTopLevel();
}

std::vector<ParsedCase> ParseStableHloCases(std::string_view text, const std::string& filename) {
  auto file = std::make_shared<const std::string>(filename);
  std::vector<ParsedCase> cases;
  size_t begin = 0;
  int first_line = 1;
  int line = 1;
  size_t pos = 0;
  auto finish = [&](size_t end) {
    ParsedCase c;
    c.first_line = first_line;
    Parser parser(text, begin, end, file);
    c.module = parser.ParseTopLevel();
    cases.push_back(std::move(c));
  };
  while (pos <= text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view l = text.substr(pos, eol - pos);
    while (!l.empty() && (l.back() == '\r' || l.back() == ' ')) l.remove_suffix(1);
    if (l == "// -----") {
      finish(pos);
      begin = eol;
      first_line = line + 1;
    }
    pos = eol + 1;
    ++line;
  }
  finish(text.size());
  return cases;
}

}  // namespace tpusim::frontend

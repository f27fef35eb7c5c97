// Attributes: builtin literals, dictionaries, arrays, dense arrays, the
// #stablehlo / #chlo enums and structs, and aliases (Shardy's: parse_sdy.cc).
#include <charconv>
#include <cstring>

#include "frontend/stablehlo/parser.h"

namespace tpusim::frontend {
namespace {

// `[b, 0, 1, f]`-style layout letters of the convolution shorthand.
struct ConvLayout {
  int64_t batch = -1;    // 'b' (input/output) or 'o' (kernel)
  int64_t feature = -1;  // 'f' (input/output) or 'i' (kernel)
  std::vector<int64_t> spatial;
};

ir::Attribute IntList(const std::vector<int64_t>& v) {
  std::vector<ir::Attribute> elems;
  elems.reserve(v.size());
  for (int64_t x : v) elems.push_back(ir::Attribute::Int(x));
  return ir::Attribute::Array(std::move(elems));
}

}  // namespace

// A number with an optional `: type`: an integer or float attribute. A hex
// literal of a float type holds the bits of that type; hex wider than the
// type (as Attribute::ToString prints non-finite values) is f64 bits.
static StatusOr<ir::Attribute> ParseNumberAttr(Parser& p) {
  size_t offset = p.tok().offset;
  bool negative = p.tok().is(TokenKind::kMinus);
  if (negative) p.Advance();
  Token num = p.tok();
  if (!num.is(TokenKind::kInteger) && !num.is(TokenKind::kFloat)) {
    return p.Error("expected a number");
  }
  p.Advance();
  ir::ElementType type = num.is(TokenKind::kFloat) ? ir::ElementType::kF64 : ir::ElementType::kSI64;
  if (p.Consume(TokenKind::kColon)) {
    if (p.tok().IsKeyword("index")) {
      p.Advance();
    } else {
      TPUSIM_ASSIGN_OR_RETURN(type, p.ParseElementType());
    }
  }
  bool hex = num.text.size() > 2 && num.text[1] == 'x';
  if (ir::IsFloat(type)) {
    double v = 0;
    if (hex) {
      uint64_t bits = 0;
      auto [ptr, ec] = std::from_chars(num.text.data() + 2, num.text.data() + num.text.size(), bits, 16);
      if (ec != std::errc() || negative) return p.ErrorAt(offset, "bad hexadecimal float literal");
      if (type == ir::ElementType::kF32 && num.text.size() - 2 <= 8) {
        float f;
        uint32_t b32 = static_cast<uint32_t>(bits);
        std::memcpy(&f, &b32, 4);
        v = f;
      } else {
        std::memcpy(&v, &bits, 8);
      }
    } else {
      auto [ptr, ec] = std::from_chars(num.text.data(), num.text.data() + num.text.size(), v);
      if (ec != std::errc() && ec != std::errc::result_out_of_range) {
        return p.ErrorAt(offset, "bad float literal");
      }
      if (negative) v = -v;
    }
    return ir::Attribute::Float(v, type);
  }
  if (num.is(TokenKind::kFloat)) return p.ErrorAt(offset, "expected an integer literal");
  if (type == ir::ElementType::kI1) {
    if (num.text != "0" && num.text != "1") return p.ErrorAt(offset, "i1 literal must be 0 or 1");
    return ir::Attribute::Int(num.text == "1", type);
  }
  if (!ir::IsInteger(type)) return p.ErrorAt(offset, "integer literal of a non-integer type");
  uint64_t magnitude = 0;
  auto [ptr, ec] = std::from_chars(num.text.data() + (hex ? 2 : 0),
                                   num.text.data() + num.text.size(), magnitude, hex ? 16 : 10);
  if (ec != std::errc()) return p.ErrorAt(offset, "integer literal too large");
  if (negative && (ir::IsUnsignedInt(type) || magnitude > (uint64_t{1} << 63))) {
    return p.ErrorAt(offset, "integer literal out of range");
  }
  return ir::Attribute::Int(negative ? static_cast<int64_t>(0 - magnitude)
                                     : static_cast<int64_t>(magnitude),
                            type);
}

static StatusOr<ir::Attribute> ParseDenseArray(Parser& p) {
  TPUSIM_RETURN_IF_ERROR(p.Expect(TokenKind::kLess, "'<'"));
  size_t offset = p.tok().offset;
  TPUSIM_ASSIGN_OR_RETURN(ir::ElementType type, p.ParseElementType());
  if (!ir::IsInteger(type) && !ir::IsBool(type)) {
    return p.UnimplementedAt(offset, "array<> of non-integer elements is unsupported");
  }
  std::vector<int64_t> values;
  if (p.Consume(TokenKind::kColon)) {
    do {
      if (p.tok().IsKeyword("true") || p.tok().IsKeyword("false")) {
        values.push_back(p.tok().text == "true");
        p.Advance();
        continue;
      }
      TPUSIM_ASSIGN_OR_RETURN(int64_t v, p.ParseInt64());
      values.push_back(v);
    } while (p.Consume(TokenKind::kComma));
  }
  TPUSIM_RETURN_IF_ERROR(p.Expect(TokenKind::kGreater, "'>' closing array<>"));
  return ir::Attribute::DenseArray(type, std::move(values));
}

StatusOr<ir::Attribute> Parser::ParseAttribute() {
  TPUSIM_NESTING_GUARD(this);
  size_t offset = tok_.offset;
  switch (tok_.kind) {
    case TokenKind::kString: {
      std::string s;
      if (!UnescapeString(tok_.text, &s)) return Error("bad escape in string");
      Advance();
      return ir::Attribute::String(std::move(s));
    }
    case TokenKind::kMinus:
    case TokenKind::kInteger:
    case TokenKind::kFloat:
      return ParseNumberAttr(*this);
    case TokenKind::kAtId: {
      std::string name(tok_.text.substr(1));
      if (!name.empty() && name[0] == '"' && !UnescapeString(tok_.text.substr(1), &name)) {
        return Error("bad symbol name");
      }
      Advance();
      if (tok_.is(TokenKind::kColon) && tok_.offset + 1 < buf_.size() && buf_[tok_.offset + 1] == ':') {
        // Nested references (@a::@b) are not used by StableHLO.
        return UnimplementedAt(tok_.offset, "nested symbol references are unsupported");
      }
      return ir::Attribute::SymbolRef(std::move(name));
    }
    case TokenKind::kLSquare: {
      Advance();
      std::vector<ir::Attribute> elems;
      if (!Consume(TokenKind::kRSquare)) {
        do {
          TPUSIM_ASSIGN_OR_RETURN(ir::Attribute a, ParseAttribute());
          elems.push_back(std::move(a));
        } while (Consume(TokenKind::kComma));
        TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kRSquare, "']'"));
      }
      return ir::Attribute::Array(std::move(elems));
    }
    case TokenKind::kLBrace: {
      TPUSIM_ASSIGN_OR_RETURN(auto entries, ParseDictEntries());
      return ir::Attribute::Dict(std::move(entries));
    }
    case TokenKind::kHashId:
      return ParseHashAttribute();
    default:
      break;
  }
  if (ConsumeKeyword("true")) return ir::Attribute::Bool(true);
  if (ConsumeKeyword("false")) return ir::Attribute::Bool(false);
  if (ConsumeKeyword("unit")) return ir::Attribute::Unit();
  if (tok_.IsKeyword("dense")) return ParseDenseElements();
  if (ConsumeKeyword("array")) return ParseDenseArray(*this);
  if (tok_.IsKeyword("dense_resource")) {
    return UnimplementedAt(offset, "dense_resource literals are unsupported");
  }
  if (AtTypeStart()) {
    TPUSIM_ASSIGN_OR_RETURN(ir::Type t, ParseType());
    return ir::Attribute::TypeAttr(std::move(t));
  }
  if (tok_.is(TokenKind::kBareId)) {
    return UnimplementedAt(offset, "unsupported attribute '" + std::string(tok_.text) + "'");
  }
  return Error("expected an attribute");
}

StatusOr<std::vector<ir::NamedAttribute>> Parser::ParseDictEntries() {
  TPUSIM_NESTING_GUARD(this);
  TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kLBrace, "'{'"));
  std::vector<ir::NamedAttribute> entries;
  if (Consume(TokenKind::kRBrace)) return entries;
  do {
    std::string key;
    if (tok_.is(TokenKind::kString)) {
      if (!UnescapeString(tok_.text, &key)) return Error("bad escape in string");
    } else if (tok_.is(TokenKind::kBareId)) {
      key = std::string(tok_.text);
    } else {
      return Error("expected an attribute name");
    }
    Advance();
    ir::Attribute value = ir::Attribute::Unit();
    if (Consume(TokenKind::kEqual)) {
      TPUSIM_ASSIGN_OR_RETURN(value, ParseAttribute());
    }
    entries.emplace_back(std::move(key), std::move(value));
  } while (Consume(TokenKind::kComma));
  TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kRBrace, "'}' closing the attribute dictionary"));
  return entries;
}

Status Parser::ParseAttributeDict(ir::AttributeMap* map) {
  TPUSIM_ASSIGN_OR_RETURN(auto entries, ParseDictEntries());
  for (auto& [k, v] : entries) map->Set(std::move(k), std::move(v));
  return Status::Ok();
}

StatusOr<ir::Attribute> Parser::ParseStructBody(const std::string& name) {
  std::vector<ir::NamedAttribute> fields;
  if (!tok_.is(TokenKind::kGreater)) {
    do {
      if (!tok_.is(TokenKind::kBareId)) return Error("expected a field name in #" + name);
      std::string key(tok_.text);
      Advance();
      TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'='"));
      ir::Attribute value;
      // Type-valued fields (dot_algorithm's `lhs_precision_type = tf32`)
      // keep the type's spelling: tf32 has no tensor element type.
      if (tok_.is(TokenKind::kBareId) && !tok_.IsKeyword("true") && !tok_.IsKeyword("false") &&
          !tok_.IsKeyword("dense") && !tok_.IsKeyword("array")) {
        value = ir::Attribute::String(std::string(tok_.text));
        Advance();
      } else {
        TPUSIM_ASSIGN_OR_RETURN(value, ParseAttribute());
      }
      fields.emplace_back(std::move(key), std::move(value));
    } while (Consume(TokenKind::kComma));
  }
  TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kGreater, "'>' closing #" + name));
  return ir::Attribute::Struct(name, std::move(fields));
}

// One side of the convolution shorthand; `batch`/`feature` letters differ
// for the kernel ('o'/'i') and the others ('b'/'f').
static StatusOr<ConvLayout> ParseConvLayout(Parser& p, char batch, char feature) {
  TPUSIM_RETURN_IF_ERROR(p.Expect(TokenKind::kLSquare, "'[' in convolution dimension numbers"));
  ConvLayout layout;
  std::vector<std::pair<int64_t, int64_t>> spatial;  // (spatial index, dimension)
  int64_t dim = 0;
  do {
    const Token& t = p.tok();
    if (t.is(TokenKind::kInteger)) {
      TPUSIM_ASSIGN_OR_RETURN(int64_t index, p.ParseInt64());
      spatial.emplace_back(index, dim);
    } else if (t.is(TokenKind::kBareId) && t.text.size() == 1 &&
               (t.text[0] == batch || t.text[0] == feature)) {
      int64_t& slot = t.text[0] == batch ? layout.batch : layout.feature;
      if (slot >= 0) return p.Error("repeated dimension letter");
      slot = dim;
      p.Advance();
    } else {
      return p.Error(std::string("expected '") + batch + "', '" + feature +
                     "' or a spatial dimension number");
    }
    ++dim;
  } while (p.Consume(TokenKind::kComma));
  TPUSIM_RETURN_IF_ERROR(p.Expect(TokenKind::kRSquare, "']'"));
  if (layout.batch < 0 || layout.feature < 0) {
    return p.Error(std::string("convolution layout needs both '") + batch + "' and '" + feature + "'");
  }
  layout.spatial.assign(spatial.size(), -1);
  for (auto [index, d] : spatial) {
    if (index < 0 || index >= static_cast<int64_t>(spatial.size()) || layout.spatial[index] >= 0) {
      return p.Error("spatial dimension numbers must be a permutation of 0..n-1");
    }
    layout.spatial[index] = d;
  }
  return layout;
}

StatusOr<ir::Attribute> Parser::ParseConvDimensionNumbers() {
  TPUSIM_ASSIGN_OR_RETURN(ConvLayout in, ParseConvLayout(*this, 'b', 'f'));
  // The `x` between the groups lexes as an identifier.
  if (!ConsumeKeyword("x")) return Error("expected 'x' between convolution layouts");
  TPUSIM_ASSIGN_OR_RETURN(ConvLayout kernel, ParseConvLayout(*this, 'o', 'i'));
  TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kArrow, "'->'"));
  TPUSIM_ASSIGN_OR_RETURN(ConvLayout out, ParseConvLayout(*this, 'b', 'f'));
  return ir::Attribute::Struct(
      "stablehlo.conv",
      {{"input_batch_dimension", ir::Attribute::Int(in.batch)},
       {"input_feature_dimension", ir::Attribute::Int(in.feature)},
       {"input_spatial_dimensions", IntList(in.spatial)},
       {"kernel_input_feature_dimension", ir::Attribute::Int(kernel.feature)},
       {"kernel_output_feature_dimension", ir::Attribute::Int(kernel.batch)},
       {"kernel_spatial_dimensions", IntList(kernel.spatial)},
       {"output_batch_dimension", ir::Attribute::Int(out.batch)},
       {"output_feature_dimension", ir::Attribute::Int(out.feature)},
       {"output_spatial_dimensions", IntList(out.spatial)}});
}

StatusOr<ir::Attribute> Parser::ParseHashAttribute() {
  size_t offset = tok_.offset;
  std::string name(tok_.text.substr(1));
  Advance();
  if (!tok_.is(TokenKind::kLess) || tok_.offset != offset + name.size() + 1) {
    auto it = attr_aliases_.find(name);
    if (it == attr_aliases_.end()) return ErrorAt(offset, "undefined attribute alias #" + name);
    return it->second;
  }
  Advance();
  if (name == "sdy" && tok_.is(TokenKind::kBareId) && tok_.text == "manual_axes") {
    // `#sdy<manual_axes{"x", "y"}>`: the manual axes of a manual computation.
    Advance();
    TPUSIM_ASSIGN_OR_RETURN(ir::Attribute axes, ParseSdyAxisSet());
    TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kGreater, "'>'"));
    return axes;
  }
  if (name.find('.') == std::string::npos) {
    // `#stablehlo<comparison_direction EQ>`: a dialect enum.
    if (!tok_.is(TokenKind::kBareId)) return Error("expected an enum kind");
    std::string kind(tok_.text);
    Advance();
    if (!tok_.is(TokenKind::kBareId)) return Error("expected an enum value");
    std::string value(tok_.text);
    Advance();
    TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kGreater, "'>'"));
    return ir::Attribute::Enum(name + "." + kind, std::move(value));
  }
  if (name == "stablehlo.type_extensions" || name == "stablehlo.bounds") {
    return UnimplementedAt(offset, "dynamic shapes unsupported (bounded dimensions)");
  }
  if (name == "stablehlo.conv" && tok_.is(TokenKind::kLSquare)) {
    TPUSIM_ASSIGN_OR_RETURN(ir::Attribute conv, ParseConvDimensionNumbers());
    TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kGreater, "'>'"));
    return conv;
  }
  if (name == "sdy.sharding") return ParseSdyShardingBody();
  if (name == "sdy.mesh") return ParseSdyMeshBody();
  if (name == "sdy.op_sharding_rule") return ParseSdyRuleBody();
  if (name == "sdy.sharding_per_value") {
    TPUSIM_ASSIGN_OR_RETURN(ir::Attribute list, ParseSdyShardingList());
    TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kGreater, "'>'"));
    return list;
  }
  if (tok_.is(TokenKind::kBareId)) {
    // `#stablehlo.result_accuracy_mode<DEFAULT>`: a single-value enum.
    Token word = tok_;
    Advance();
    if (Consume(TokenKind::kGreater)) return ir::Attribute::Enum(name, std::string(word.text));
    ResetTo(word.offset);
  }
  return ParseStructBody(name);
}

Status Parser::ParseAliasDefinition() {
  bool is_type = tok_.is(TokenKind::kBangId);
  std::string name(tok_.text.substr(1));
  Advance();
  TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' in an alias definition"));
  if (is_type) {
    TPUSIM_ASSIGN_OR_RETURN(ir::Type t, ParseType());
    type_aliases_[name] = std::move(t);
    return Status::Ok();
  }
  // `#loc1 = loc(...)`: the lexer dropped the location; nothing to define.
  if (tok_.after_loc) return Status::Ok();
  TPUSIM_ASSIGN_OR_RETURN(ir::Attribute a, ParseAttribute());
  attr_aliases_[name] = std::move(a);
  return Status::Ok();
}

}  // namespace tpusim::frontend

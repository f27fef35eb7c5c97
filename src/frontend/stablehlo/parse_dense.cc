// dense<...> literals: splats, nested lists, hex blobs, complex pairs. The
// literal is read before its type (which follows it), so elements are first
// collected as tokens and encoded once the type is known.
#include <charconv>
#include <cstring>

#include "frontend/stablehlo/parser.h"
#include "tpusim/numerics/float_formats.h"

namespace tpusim::frontend {
namespace {

struct Element {
  Token token;  // kInteger, kFloat, or kBareId (true/false)
  bool negative = false;
};

struct Literal {
  bool is_list = false;    // `[...]` (else a single splat value or a hex blob)
  bool is_hex = false;     // `"0x..."`: raw little-endian bytes in `hex`
  bool is_complex = false; // elements are (re, im) pairs
  std::vector<Element> elements;
  std::vector<int64_t> shape;  // of the nested list
  std::vector<uint8_t> hex;
  size_t offset = 0;
};

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class DenseReader {
 public:
  DenseReader(Parser& p, Literal& lit) : p_(p), lit_(lit) {}

  Status ReadScalar() {
    if (!p_.Consume(TokenKind::kLParen)) return ReadNumber();
    lit_.is_complex = true;
    TPUSIM_RETURN_IF_ERROR(ReadNumber());
    TPUSIM_RETURN_IF_ERROR(p_.Expect(TokenKind::kComma, "',' in a complex literal"));
    TPUSIM_RETURN_IF_ERROR(ReadNumber());
    return p_.Expect(TokenKind::kRParen, "')' closing a complex literal");
  }

  // A `[...]` at nesting `depth`; every list at one depth has one length.
  Status ReadList(size_t depth) {
    TPUSIM_NESTING_GUARD(&p_);
    size_t offset = p_.tok().offset;
    TPUSIM_RETURN_IF_ERROR(p_.Expect(TokenKind::kLSquare, "'['"));
    int64_t count = 0;
    if (!p_.tok().is(TokenKind::kRSquare)) {
      do {
        ++count;
        if (p_.tok().is(TokenKind::kLSquare)) {
          TPUSIM_RETURN_IF_ERROR(SetLeafDepth(depth + 1, false));
          TPUSIM_RETURN_IF_ERROR(ReadList(depth + 1));
        } else {
          TPUSIM_RETURN_IF_ERROR(SetLeafDepth(depth + 1, true));
          TPUSIM_RETURN_IF_ERROR(ReadScalar());
        }
      } while (p_.Consume(TokenKind::kComma));
    } else {
      TPUSIM_RETURN_IF_ERROR(SetLeafDepth(depth + 1, true));
    }
    TPUSIM_RETURN_IF_ERROR(p_.Expect(TokenKind::kRSquare, "']'"));
    if (depth >= lit_.shape.size()) {
      lit_.shape.resize(depth + 1, -1);
    }
    if (lit_.shape[depth] < 0) {
      lit_.shape[depth] = count;
    } else if (lit_.shape[depth] != count) {
      return p_.ErrorAt(offset, "inconsistent list lengths in dense literal: " +
                                    std::to_string(count) + " vs " +
                                    std::to_string(lit_.shape[depth]));
    }
    return Status::Ok();
  }

 private:
  Status ReadNumber() {
    Element e;
    e.negative = p_.Consume(TokenKind::kMinus);
    const Token& t = p_.tok();
    bool word = t.IsKeyword("true") || t.IsKeyword("false");
    if (!t.is(TokenKind::kInteger) && !t.is(TokenKind::kFloat) && !(word && !e.negative)) {
      return p_.Error("expected a number, true or false in dense literal");
    }
    e.token = t;
    p_.Advance();
    lit_.elements.push_back(e);
    return Status::Ok();
  }

  // Leaves (scalars or empty lists) must all sit at one depth.
  Status SetLeafDepth(size_t depth, bool leaf) {
    if (!leaf) {
      if (leaf_depth_ != 0 && depth >= leaf_depth_) return p_.Error("ragged dense literal");
      return Status::Ok();
    }
    if (leaf_depth_ == 0) leaf_depth_ = depth;
    if (leaf_depth_ != depth) return p_.Error("ragged dense literal");
    return Status::Ok();
  }

  Parser& p_;
  Literal& lit_;
  size_t leaf_depth_ = 0;
};

Status ParseHexBlob(Parser& p, Literal* lit) {
  std::string_view raw = p.tok().text;  // "0x...", quotes included
  if (raw.size() < 4 || raw[1] != '0' || raw[2] != 'x' || (raw.size() - 4) % 2 != 0) {
    if (raw.size() >= 4 && raw[1] == '0' && raw[2] == 'x') {
      return p.Error("hex literal has an odd number of digits");
    }
    return p.UnimplementedAt(p.tok().offset, "string tensors are unsupported");
  }
  std::string_view digits = raw.substr(3, raw.size() - 4);
  lit->hex.resize(digits.size() / 2);
  for (size_t i = 0; i < lit->hex.size(); ++i) {
    int hi = HexValue(digits[2 * i]);
    int lo = HexValue(digits[2 * i + 1]);
    if (hi < 0 || lo < 0) return p.ErrorAt(p.tok().offset + 3 + 2 * i, "bad hex digit");
    lit->hex[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  lit->is_hex = true;
  p.Advance();
  return Status::Ok();
}

// Wraps `v` to the type's width: sign-extended for signed, zero-extended
// for unsigned, as element storage wants.
int64_t WrapInt(ir::ElementType t, uint64_t v) {
  int bits = ir::BitWidth(t);
  if (bits >= 64) return static_cast<int64_t>(v);
  uint64_t mask = (uint64_t{1} << bits) - 1;
  v &= mask;
  if (ir::IsSignedInt(t) && (v >> (bits - 1)) != 0) v |= ~mask;
  return static_cast<int64_t>(v);
}

void StoreLe(uint64_t v, int bytes, uint8_t* out) {
  for (int i = 0; i < bytes; ++i) out[i] = static_cast<uint8_t>(v >> (8 * i));
}

class Encoder {
 public:
  explicit Encoder(Parser& p) : p_(p) {}

  // Stores one real element of type t (a complex part uses the part type).
  Status Encode(const Element& e, ir::ElementType t, uint8_t* out) {
    if (ir::IsBool(t)) return EncodeBool(e, out);
    if (ir::IsInteger(t)) return EncodeInt(e, t, out);
    return EncodeFloat(e, t, out);
  }

 private:
  Status EncodeBool(const Element& e, uint8_t* out) {
    std::string_view s = e.token.text;
    if (e.negative || (s != "true" && s != "false" && s != "0" && s != "1")) {
      return p_.ErrorAt(e.token.offset, "expected true or false for an i1 element");
    }
    *out = (s == "true" || s == "1") ? 1 : 0;
    return Status::Ok();
  }

  Status EncodeInt(const Element& e, ir::ElementType t, uint8_t* out) {
    if (!e.token.is(TokenKind::kInteger)) {
      return p_.ErrorAt(e.token.offset, "expected an integer for " +
                                            std::string(ir::ElementTypeName(t)));
    }
    TPUSIM_ASSIGN_OR_RETURN(uint64_t magnitude, Magnitude(e.token));
    int bits = ir::BitWidth(t);
    uint64_t max_unsigned = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
    bool ok = e.negative ? ir::IsSignedInt(t) && magnitude <= (uint64_t{1} << (bits - 1))
                         : magnitude <= max_unsigned;  // signless: any N-bit pattern
    if (!ok) {
      return p_.ErrorAt(e.token.offset, "integer literal out of range of " +
                                            std::string(ir::ElementTypeName(t)));
    }
    uint64_t v = e.negative ? 0 - magnitude : magnitude;
    StoreLe(static_cast<uint64_t>(WrapInt(t, v)), ir::StorageBytes(t), out);
    return Status::Ok();
  }

  // Decimal literals go through double (as MLIR does) and round to nearest
  // even into the type; hex literals are the type's bit pattern.
  Status EncodeFloat(const Element& e, ir::ElementType t, uint8_t* out) {
    std::string_view s = e.token.text;
    int bits = ir::BitWidth(t);
    if (e.token.is(TokenKind::kInteger) && s.size() > 2 && s[1] == 'x') {
      TPUSIM_ASSIGN_OR_RETURN(uint64_t pattern, Magnitude(e.token));
      if (e.negative || (bits < 64 && (pattern >> bits) != 0)) {
        return p_.ErrorAt(e.token.offset, "hex literal does not fit " +
                                              std::string(ir::ElementTypeName(t)));
      }
      StoreLe(pattern, ir::StorageBytes(t), out);
      return Status::Ok();
    }
    if (!e.token.is(TokenKind::kInteger) && !e.token.is(TokenKind::kFloat)) {
      return p_.ErrorAt(e.token.offset, "expected a float literal");
    }
    double v = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() && ec != std::errc::result_out_of_range) {
      return p_.ErrorAt(e.token.offset, "bad float literal");
    }
    if (e.negative) v = -v;
    if (t == ir::ElementType::kF64) {
      std::memcpy(out, &v, 8);
    } else if (t == ir::ElementType::kF32) {
      float f = static_cast<float>(v);
      std::memcpy(out, &f, 4);
    } else {
      StoreLe(numerics::EncodeSmallFloat(t, v), ir::StorageBytes(t), out);
    }
    return Status::Ok();
  }

  StatusOr<uint64_t> Magnitude(const Token& t) {
    bool hex = t.text.size() > 2 && t.text[1] == 'x';
    uint64_t v = 0;
    auto [ptr, ec] = std::from_chars(t.text.data() + (hex ? 2 : 0), t.text.data() + t.text.size(),
                                     v, hex ? 16 : 10);
    if (ec != std::errc()) return p_.ErrorAt(t.offset, "integer literal too large");
    return v;
  }

  Parser& p_;
};

StatusOr<ir::Attribute> FromHex(Parser& p, const Literal& lit, const ir::Type& type) {
  ir::ElementType e = type.element();
  int64_t n = type.num_elements();
  const std::vector<uint8_t>& hex = lit.hex;
  if (ir::IsBool(e)) {
    // MLIR writes i1 blobs one byte per element (0x00 or 0x01) and a splat
    // as one byte; older MLIR bit-packed them (LSB first) with an
    // 0x00/0xFF byte as the splat. Any nonzero byte is true.
    const auto size = static_cast<int64_t>(hex.size());
    std::vector<uint8_t> bytes(n);
    if (size == n) {
      for (int64_t i = 0; i < n; ++i) bytes[i] = hex[i] != 0;
    } else if (size == 1 && (hex[0] == 0 || hex[0] == 1 || hex[0] == 0xFF)) {
      return ir::Attribute::DenseElements(type, {static_cast<uint8_t>(hex[0] != 0)});
    } else if (size == (n + 7) / 8) {
      for (int64_t i = 0; i < n; ++i) bytes[i] = (hex[i / 8] >> (i % 8)) & 1;
    } else {
      return p.ErrorAt(lit.offset, "hex literal of " + std::to_string(size) +
                                       " bytes does not match " + type.ToString());
    }
    return ir::Attribute::DenseElements(type, std::move(bytes));
  }
  int64_t w = ir::StorageBytes(e);
  int64_t count = static_cast<int64_t>(hex.size()) / w;
  if (static_cast<int64_t>(hex.size()) % w != 0 || (count != n && count != 1)) {
    return p.ErrorAt(lit.offset, "hex literal of " + std::to_string(hex.size()) +
                                     " bytes does not match " + type.ToString());
  }
  std::vector<uint8_t> bytes = hex;
  if (ir::IsInteger(e) && ir::BitWidth(e) < 8) {
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(WrapInt(e, b));
  }
  return ir::Attribute::DenseElements(type, std::move(bytes));
}

StatusOr<ir::Attribute> Encode(Parser& p, const Literal& lit, const ir::Type& type) {
  if (!type.is_tensor()) return p.ErrorAt(lit.offset, "dense literal needs a tensor type");
  if (lit.is_hex) return FromHex(p, lit, type);
  ir::ElementType e = type.element();
  bool complex = ir::IsComplex(e);
  if (lit.is_complex != complex && !lit.elements.empty()) {
    return p.ErrorAt(lit.offset, complex ? "expected (real, imag) pairs for a complex type"
                                         : "complex literal for a non-complex type");
  }
  int64_t n = type.num_elements();
  int64_t given = static_cast<int64_t>(lit.elements.size()) / (complex ? 2 : 1);
  if (lit.is_list && !(lit.elements.empty() && n == 0)) {
    if (lit.shape != type.shape()) {
      return p.ErrorAt(lit.offset, "dense literal shape does not match " + type.ToString());
    }
  } else if (given == 0 && n != 0) {
    return p.ErrorAt(lit.offset, "empty dense literal for " + type.ToString());
  }
  ir::ElementType part = complex ? ir::ComplexPartType(e) : e;
  int64_t part_bytes = ir::StorageBytes(part);
  std::vector<uint8_t> bytes(lit.elements.size() * part_bytes);
  Encoder enc(p);
  for (size_t i = 0; i < lit.elements.size(); ++i) {
    TPUSIM_RETURN_IF_ERROR(enc.Encode(lit.elements[i], part, bytes.data() + i * part_bytes));
  }
  return ir::Attribute::DenseElements(type, std::move(bytes));
}

}  // namespace

StatusOr<ir::Attribute> Parser::ParseDenseBodyThenType() {
  Literal lit;
  lit.offset = tok_.offset;
  TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kLess, "'<' after dense"));
  DenseReader reader(*this, lit);
  if (tok_.is(TokenKind::kString)) {
    TPUSIM_RETURN_IF_ERROR(ParseHexBlob(*this, &lit));
  } else if (tok_.is(TokenKind::kLSquare)) {
    lit.is_list = true;
    TPUSIM_RETURN_IF_ERROR(reader.ReadList(0));
  } else if (tok_.is(TokenKind::kGreater)) {
    lit.is_list = true;  // dense<>: no elements
    lit.shape = {0};
  } else {
    TPUSIM_RETURN_IF_ERROR(reader.ReadScalar());
  }
  TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kGreater, "'>' closing dense<"));
  TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' and the type of the dense literal"));
  TPUSIM_ASSIGN_OR_RETURN(ir::Type type, ParseAttributeType());
  return Encode(*this, lit, type);
}

StatusOr<ir::Attribute> Parser::ParseDenseElements() {
  TPUSIM_RETURN_IF_ERROR(ExpectKeyword("dense"));
  return ParseDenseBodyThenType();
}

}  // namespace tpusim::frontend

// HLO literals, the text of `constant(...)`: a scalar (`1`, `-inf`, `true`,
// `(1, 2)` for complex) for rank 0, else one brace level per dimension
// (`{ {1, 2}, {3, 4} }`), encoded into a dense elements attribute.
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "frontend/hlo/lower.h"
#include "frontend/stablehlo/parser.h"
#include "tpusim/numerics/float_formats.h"

namespace tpusim::frontend {
namespace {

void StoreLe(uint64_t v, int bytes, uint8_t* out) {
  for (int i = 0; i < bytes; ++i) out[i] = static_cast<uint8_t>(v >> (8 * i));
}

class LiteralReader {
 public:
  LiteralReader(const HloSource& src, std::string_view text, const ir::Type& type)
      : src_(src), c_(CursorOver(src, text)), type_(type) {}

  StatusOr<ir::Attribute> Read() {
    if (!type_.is_tensor()) {
      return src_.UnimplementedAt(c_.pos(), "tuple and token constants are not supported");
    }
    element_ = type_.element();
    if (type_.rank() > kMaxNesting) return c_.Error("literal nested too deeply");
    part_ = ir::IsComplex(element_) ? ir::ComplexPartType(element_) : element_;
    if (type_.rank() == 0) {
      c_.SkipTrivia();
      // XLA also prints a rank-0 literal in braces in some versions.
      bool braced = c_.Consume('{');
      TPUSIM_RETURN_IF_ERROR(ReadElement());
      if (braced) TPUSIM_RETURN_IF_ERROR(c_.Expect('}', "'}'"));
    } else {
      TPUSIM_RETURN_IF_ERROR(ReadLevel(0));
    }
    if (!c_.AtEnd()) return c_.Error("unexpected text after the literal");
    return ir::Attribute::DenseElements(type_, std::move(bytes_));
  }

  // Whether the literal is XLA's `{...}` for an elided large constant.
  static bool IsElided(std::string_view text) {
    size_t a = text.find_first_not_of(" \t\n\r");
    size_t b = text.find_last_not_of(" \t\n\r");
    return a != std::string_view::npos && text.substr(a, b - a + 1) == "{...}";
  }

 private:
  Status ReadLevel(int64_t dim) {
    size_t at = c_.pos();
    TPUSIM_RETURN_IF_ERROR(c_.Expect('{', "'{' opening dimension " + std::to_string(dim)));
    int64_t count = 0;
    while (!c_.Consume('}')) {
      if (count > 0) TPUSIM_RETURN_IF_ERROR(c_.Expect(',', "',' or '}'"));
      if (count >= type_.dim(dim)) {
        return c_.Error("more than " + std::to_string(type_.dim(dim)) + " elements in dimension " +
                        std::to_string(dim) + " of " + type_.ToString());
      }
      if (dim + 1 < type_.rank()) {
        TPUSIM_RETURN_IF_ERROR(ReadLevel(dim + 1));
      } else {
        TPUSIM_RETURN_IF_ERROR(ReadElement());
      }
      ++count;
    }
    if (count != type_.dim(dim)) {
      return c_.ErrorAt(at, "dimension " + std::to_string(dim) + " has " + std::to_string(count) +
                                " elements, the shape " + type_.ToString() + " says " +
                                std::to_string(type_.dim(dim)));
    }
    return Status::Ok();
  }

  Status ReadElement() {
    if (!ir::IsComplex(element_)) return ReadPart();
    TPUSIM_RETURN_IF_ERROR(c_.Expect('(', "'(' opening a complex value"));
    TPUSIM_RETURN_IF_ERROR(ReadPart());
    TPUSIM_RETURN_IF_ERROR(c_.Expect(',', "',' in a complex value"));
    TPUSIM_RETURN_IF_ERROR(ReadPart());
    return c_.Expect(')', "')' closing a complex value");
  }

  // One number: the text up to a separator.
  Status ReadPart() {
    c_.SkipTrivia();
    size_t at = c_.pos();
    std::string_view text = src_.text();
    size_t end = at;
    while (end < c_.end() && text[end] != ',' && text[end] != '}' && text[end] != ')' &&
           text[end] != ' ' && text[end] != '\n' && text[end] != '\t' && text[end] != '\r') {
      ++end;
    }
    // `nan(0x7fc00000)` carries a payload in parentheses.
    if (text.substr(at, end - at).ends_with("nan") && end < c_.end() && text[end] == '(') {
      size_t close = text.find(')', end);
      if (close < c_.end()) end = close + 1;
    }
    std::string_view word = text.substr(at, end - at);
    if (word.empty()) return c_.Error("expected a value");
    c_.set_pos(end);
    size_t n = bytes_.size();
    int width = ir::StorageBytes(part_);
    bytes_.resize(n + width);
    if (ir::IsBool(part_)) return Bool(word, at, &bytes_[n]);
    if (ir::IsInteger(part_)) return Int(word, at, &bytes_[n]);
    return Float(word, at, &bytes_[n]);
  }

  Status Bool(std::string_view w, size_t at, uint8_t* out) {
    if (w != "true" && w != "false" && w != "1" && w != "0") {
      return c_.ErrorAt(at, "expected true or false for pred");
    }
    *out = (w == "true" || w == "1") ? 1 : 0;
    return Status::Ok();
  }

  Status Int(std::string_view w, size_t at, uint8_t* out) {
    int bits = ir::BitWidth(part_);
    bool ok;
    uint64_t pattern;
    if (ir::IsUnsignedInt(part_)) {
      uint64_t v = 0;
      auto [ptr, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
      ok = ec == std::errc() && ptr == w.data() + w.size() && (bits >= 64 || (v >> bits) == 0);
      pattern = v;
    } else {
      int64_t v = 0;
      auto [ptr, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
      int64_t lo = bits >= 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1));
      int64_t hi =
          bits >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - 1)) - 1;
      ok = ec == std::errc() && ptr == w.data() + w.size() && v >= lo && v <= hi;
      pattern = static_cast<uint64_t>(v);
    }
    if (!ok) {
      return c_.ErrorAt(at, "'" + std::string(w) + "' is not a value of " +
                                std::string(ir::ElementTypeName(part_)));
    }
    StoreLe(pattern, ir::StorageBytes(part_), out);  // sign-extended when narrow
    return Status::Ok();
  }

  Status Float(std::string_view w, size_t at, uint8_t* out) {
    bool negative = w.starts_with("-");
    std::string_view m = negative || w.starts_with("+") ? w.substr(1) : w;
    double v = 0;
    if (m == "inf") {
      v = std::numeric_limits<double>::infinity();
    } else if (m.starts_with("nan")) {
      v = std::numeric_limits<double>::quiet_NaN();
    } else {
      auto [ptr, ec] = std::from_chars(m.data(), m.data() + m.size(), v);
      if ((ec != std::errc() && ec != std::errc::result_out_of_range) ||
          ptr != m.data() + m.size()) {
        return c_.ErrorAt(at, "'" + std::string(w) + "' is not a value of " +
                                  std::string(ir::ElementTypeName(part_)));
      }
    }
    if (negative) v = -v;
    if (part_ == ir::ElementType::kF64) {
      std::memcpy(out, &v, 8);
    } else if (part_ == ir::ElementType::kF32) {
      float f = static_cast<float>(v);
      std::memcpy(out, &f, 4);
    } else {
      StoreLe(numerics::EncodeSmallFloat(part_, v), ir::StorageBytes(part_), out);
    }
    return Status::Ok();
  }

  const HloSource& src_;
  HloCursor c_;
  const ir::Type& type_;
  ir::ElementType element_ = ir::ElementType::kF32;
  ir::ElementType part_ = ir::ElementType::kF32;
  std::vector<uint8_t> bytes_;
};

}  // namespace

StatusOr<ir::Attribute> ParseHloLiteral(const HloSource& source, std::string_view text,
                                        const ir::Type& type) {
  if (LiteralReader::IsElided(text)) return ir::Attribute();
  return LiteralReader(source, text, type).Read();
}

}  // namespace tpusim::frontend

// HloSource and HloCursor: locations, errors and the character-level reading
// of HLO text, shapes included.
#include <algorithm>
#include <charconv>
#include <optional>

#include "frontend/hlo/ast.h"
#include "frontend/stablehlo/lexer.h"
#include "frontend/stablehlo/parser.h"

namespace tpusim::frontend {

HloSource::HloSource(std::string_view text, const std::string& filename)
    : text_(text), file_(std::make_shared<const std::string>(filename)) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') line_starts_.push_back(i + 1);
  }
}

ir::Location HloSource::LocationAt(size_t offset) const {
  offset = std::min(offset, text_.size());
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  size_t line = static_cast<size_t>(it - line_starts_.begin());  // >= 1
  return ir::Location{file_, static_cast<int>(line),
                      static_cast<int>(offset - line_starts_[line - 1]) + 1};
}

Status HloSource::ErrorAt(size_t offset, std::string_view message) const {
  return Status(StatusCode::kInvalidArgument,
                std::string(message) + "\n" + CaretLines(text_, offset))
      .WithLocation(LocationAt(offset).ToString());
}

Status HloSource::UnimplementedAt(size_t offset, std::string_view message) const {
  return Status(StatusCode::kUnimplemented, std::string(message) + "\n" + CaretLines(text_, offset))
      .WithLocation(LocationAt(offset).ToString());
}

HloCursor CursorOver(const HloSource& source, std::string_view text) {
  size_t begin = static_cast<size_t>(text.data() - source.text().data());
  return HloCursor(source, begin, begin + text.size());
}

void HloCursor::SkipTrivia() {
  std::string_view t = src_.text();
  while (pos_ < end_) {
    char c = t[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < end_ && t[pos_ + 1] == '*') {
      size_t close = t.find("*/", pos_ + 2);
      pos_ = close == std::string_view::npos || close + 2 > end_ ? end_ : close + 2;
    } else if (c == '/' && pos_ + 1 < end_ && t[pos_ + 1] == '/') {
      while (pos_ < end_ && t[pos_] != '\n') ++pos_;
    } else {
      return;
    }
  }
}

bool HloCursor::AtEnd() {
  SkipTrivia();
  return pos_ >= end_;
}

char HloCursor::Peek() {
  SkipTrivia();
  return PeekRaw();
}

bool HloCursor::Consume(char c) {
  if (Peek() != c || AtEnd()) return false;
  ++pos_;
  return true;
}

bool HloCursor::ConsumeText(std::string_view s) {
  SkipTrivia();
  if (end_ - pos_ < s.size() || src_.text().substr(pos_, s.size()) != s) return false;
  pos_ += s.size();
  return true;
}

Status HloCursor::Expect(char c, std::string_view what) {
  if (Consume(c)) return Status::Ok();
  if (AtEnd()) return Error("expected " + std::string(what) + ", found the end");
  return Error("expected " + std::string(what) + ", found '" + std::string(1, PeekRaw()) + "'");
}

namespace {

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

}  // namespace

std::string_view HloCursor::ReadName() {
  SkipTrivia();
  std::string_view t = src_.text();
  size_t start = pos_;
  if (pos_ < end_ && t[pos_] == '%') ++pos_;
  size_t name_start = pos_;
  while (pos_ < end_ && IsNameChar(t[pos_]) &&
         !(t[pos_] == '-' && pos_ + 1 < end_ && t[pos_ + 1] == '>')) {
    ++pos_;
  }
  if (pos_ == name_start) {
    pos_ = start;
    return {};
  }
  return t.substr(name_start, pos_ - name_start);
}

StatusOr<int64_t> HloCursor::ReadInt() {
  SkipTrivia();
  std::string_view t = src_.text();
  size_t start = pos_;
  if (pos_ < end_ && t[pos_] == '-') ++pos_;
  while (pos_ < end_ && t[pos_] >= '0' && t[pos_] <= '9') ++pos_;
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(t.data() + start, t.data() + pos_, v);
  if (ec != std::errc() || ptr != t.data() + pos_) {
    pos_ = start;
    return ec == std::errc::result_out_of_range ? Error("integer out of range of s64")
                                                : Error("expected an integer");
  }
  return v;
}

StatusOr<std::vector<int64_t>> HloCursor::ReadIntList() {
  TPUSIM_RETURN_IF_ERROR(Expect('{', "'{' opening a list of integers"));
  std::vector<int64_t> out;
  if (Consume('}')) return out;
  do {
    TPUSIM_ASSIGN_OR_RETURN(int64_t v, ReadInt());
    out.push_back(v);
  } while (Consume(','));
  TPUSIM_RETURN_IF_ERROR(Expect('}', "',' or '}'"));
  return out;
}

Status HloCursor::SkipBalanced(char open) {
  std::string_view t = src_.text();
  std::string closers;
  size_t start = pos_;
  auto closer = [](char c) { return c == '(' ? ')' : c == '[' ? ']' : '}'; };
  closers.push_back(closer(open));
  ++pos_;
  while (pos_ < end_ && !closers.empty()) {
    char c = t[pos_];
    if (c == '"') {
      ++pos_;
      while (pos_ < end_ && t[pos_] != '"') pos_ += t[pos_] == '\\' ? 2 : 1;
      if (pos_ >= end_) {
        pos_ = end_;
        return ErrorAt(start, "unterminated string");
      }
    } else if (c == '(' || c == '[' || c == '{') {
      if (closers.size() >= static_cast<size_t>(kMaxNesting)) {
        return ErrorAt(pos_, "nesting too deep");
      }
      closers.push_back(closer(c));
    } else if (c == ')' || c == ']' || c == '}') {
      if (c != closers.back()) {
        return ErrorAt(pos_, "expected '" + std::string(1, closers.back()) + "', found '" +
                                 std::string(1, c) + "'");
      }
      closers.pop_back();
    }
    ++pos_;
  }
  if (!closers.empty()) {
    pos_ = std::min(pos_, end_);
    return ErrorAt(start, "'" + std::string(1, open) + "' is never closed");
  }
  return Status::Ok();
}

StatusOr<std::string_view> HloCursor::ReadBracketed() {
  char open = Peek();
  if (open != '(' && open != '[' && open != '{') return Error("expected '(', '[' or '{'");
  size_t start = pos_;
  TPUSIM_RETURN_IF_ERROR(SkipBalanced(open));
  return src_.text().substr(start + 1, pos_ - start - 2);
}

StatusOr<std::string_view> HloCursor::ReadRawValue() {
  SkipTrivia();
  std::string_view t = src_.text();
  size_t start = pos_;
  while (pos_ < end_) {
    char c = t[pos_];
    if (c == '(' || c == '[' || c == '{') {
      TPUSIM_RETURN_IF_ERROR(SkipBalanced(c));
    } else if (c == '"') {
      TPUSIM_RETURN_IF_ERROR(ReadString().status());
    } else if (c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ')' ||
               c == ']' || c == '}') {
      break;
    } else {
      ++pos_;
    }
  }
  if (pos_ == start) return Error("expected an attribute value");
  return t.substr(start, pos_ - start);
}

StatusOr<std::string> HloCursor::ReadString() {
  SkipTrivia();
  std::string_view t = src_.text();
  size_t start = pos_;
  if (PeekRaw() != '"') return Error("expected a string");
  ++pos_;
  while (pos_ < end_ && t[pos_] != '"') pos_ += t[pos_] == '\\' ? 2 : 1;
  if (pos_ >= end_) {
    pos_ = end_;
    return ErrorAt(start, "unterminated string");
  }
  ++pos_;
  std::string out;
  if (!UnescapeString(t.substr(start, pos_ - start), &out)) {
    return ErrorAt(start, "malformed escape in string");
  }
  return out;
}

std::optional<ir::ElementType> HloElementType(std::string_view name) {
  using ir::ElementType;
  struct Entry {
    std::string_view hlo;
    ElementType type;
  };
  static constexpr Entry kTypes[] = {
      {"pred", ElementType::kI1},
      {"s2", ElementType::kSI2},
      {"s4", ElementType::kSI4},
      {"s8", ElementType::kSI8},
      {"s16", ElementType::kSI16},
      {"s32", ElementType::kSI32},
      {"s64", ElementType::kSI64},
      {"u2", ElementType::kUI2},
      {"u4", ElementType::kUI4},
      {"u8", ElementType::kUI8},
      {"u16", ElementType::kUI16},
      {"u32", ElementType::kUI32},
      {"u64", ElementType::kUI64},
      {"f16", ElementType::kF16},
      {"bf16", ElementType::kBF16},
      {"f32", ElementType::kF32},
      {"f64", ElementType::kF64},
      {"c64", ElementType::kC64},
      {"c128", ElementType::kC128},
      {"f4e2m1fn", ElementType::kF4E2M1FN},
      {"f6e2m3fn", ElementType::kF6E2M3FN},
      {"f6e3m2fn", ElementType::kF6E3M2FN},
      {"f8e3m4", ElementType::kF8E3M4},
      {"f8e4m3", ElementType::kF8E4M3},
      {"f8e4m3fn", ElementType::kF8E4M3FN},
      {"f8e4m3fnuz", ElementType::kF8E4M3FNUZ},
      {"f8e4m3b11fnuz", ElementType::kF8E4M3B11FNUZ},
      {"f8e5m2", ElementType::kF8E5M2},
      {"f8e5m2fnuz", ElementType::kF8E5M2FNUZ},
      {"f8e8m0fnu", ElementType::kF8E8M0FNU},
  };
  for (const Entry& e : kTypes) {
    if (e.hlo == name) return e.type;
  }
  return std::nullopt;
}

StatusOr<ir::Type> HloCursor::ReadShape() { return ReadShapeAt(0); }

StatusOr<ir::Type> HloCursor::ReadShapeAt(int depth) {
  if (depth > kMaxNesting) return Error("shape nested too deeply");
  if (!Consume('(')) return ReadArrayShape();
  std::vector<ir::Type> elements;
  if (!Consume(')')) {
    do {
      TPUSIM_ASSIGN_OR_RETURN(ir::Type e, ReadShapeAt(depth + 1));
      elements.push_back(std::move(e));
    } while (Consume(','));
    TPUSIM_RETURN_IF_ERROR(Expect(')', "',' or ')' in a tuple shape"));
  }
  return ir::Type::Tuple(std::move(elements));
}

StatusOr<ir::Type> HloCursor::ReadArrayShape() {
  SkipTrivia();
  size_t offset = pos_;
  std::string_view name = ReadName();
  if (name.empty()) return Error("expected a shape");
  if (PeekRaw() != '[') return ErrorAt(pos_, "expected '[' after the element type");
  ++pos_;
  if (name == "token") {
    TPUSIM_RETURN_IF_ERROR(Expect(']', "']' closing token[]"));
    return ir::Type::Token();
  }
  std::optional<ir::ElementType> element = HloElementType(name);
  if (!element) {
    return name == "opaque" || name == "tf32" || name == "s1" || name == "u1"
               ? src_.UnimplementedAt(offset,
                                      "element type '" + std::string(name) + "' is not supported")
               : ErrorAt(offset, "unknown element type '" + std::string(name) + "'");
  }
  ir::Shape shape;
  int64_t elements = 1;
  if (!Consume(']')) {
    do {
      SkipTrivia();
      if (PeekRaw() == '<' || PeekRaw() == '?') {
        return src_.UnimplementedAt(pos_, "dynamic dimensions are not supported");
      }
      size_t dim_offset = pos_;
      TPUSIM_ASSIGN_OR_RETURN(int64_t dim, ReadInt());
      if (dim < 0) return ErrorAt(dim_offset, "negative dimension");
      if (dim != 0 && elements > kMaxElements / dim) {
        return ErrorAt(dim_offset, "shape has too many elements");
      }
      elements *= dim;
      shape.push_back(dim);
    } while (Consume(','));
    TPUSIM_RETURN_IF_ERROR(Expect(']', "',' or ']' in a shape"));
  }
  ir::Type type = ir::Type::Tensor(*element, std::move(shape));
  if (PeekRaw() != '{') return type;  // a layout follows the ']' directly
  size_t layout_offset = pos_;
  ++pos_;
  std::vector<int64_t> minor_to_major;
  while (Peek() != '}' && Peek() != ':') {
    if (!minor_to_major.empty()) TPUSIM_RETURN_IF_ERROR(Expect(',', "',' in a layout"));
    TPUSIM_ASSIGN_OR_RETURN(int64_t d, ReadInt());
    minor_to_major.push_back(d);
  }
  if (Peek() == ':') {
    // Tiling, memory space and element size: physical details the timing
    // model derives itself.
    pos_ = layout_offset;
    TPUSIM_RETURN_IF_ERROR(SkipBalanced('{'));
  } else {
    ++pos_;
  }
  if (minor_to_major.empty() && type.rank() > 0) return type;  // `{}` on a array: none given
  if (!ir::IsValidLayout(minor_to_major, type.rank())) {
    return ErrorAt(layout_offset, "layout " + ir::LayoutString(minor_to_major) +
                                      " is not a permutation of the dimensions of " +
                                      type.ToString());
  }
  return type.WithLayout(std::move(minor_to_major));
}

}  // namespace tpusim::frontend

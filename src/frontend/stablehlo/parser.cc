#include "frontend/stablehlo/parser.h"

#include <algorithm>
#include <charconv>
#include <limits>

namespace tpusim::frontend {

Parser::Parser(std::string_view buffer, size_t begin, size_t end,
               std::shared_ptr<const std::string> filename)
    : buf_(buffer), file_(std::move(filename)), lexer_(buffer, begin, end) {
  Advance();
}

bool Parser::Consume(TokenKind k) {
  if (!tok_.is(k)) return false;
  Advance();
  return true;
}

bool Parser::ConsumeKeyword(std::string_view k) {
  if (!tok_.IsKeyword(k)) return false;
  Advance();
  return true;
}

Status Parser::Expect(TokenKind k, std::string_view what) {
  if (Consume(k)) return Status::Ok();
  std::string found =
      tok_.is(TokenKind::kEof) ? "end of input" : "'" + std::string(tok_.text) + "'";
  return Error("expected " + std::string(what) + ", found " + found);
}

Status Parser::ExpectKeyword(std::string_view k) {
  if (ConsumeKeyword(k)) return Status::Ok();
  std::string found =
      tok_.is(TokenKind::kEof) ? "end of input" : "'" + std::string(tok_.text) + "'";
  return Error("expected '" + std::string(k) + "', found " + found);
}

ir::Location Parser::LocationAt(size_t offset) const {
  // Ops are located in source order, so continue from the last answer
  // instead of rescanning the buffer each time.
  if (offset > buf_.size()) offset = buf_.size();
  if (offset < line_cache_offset_) {
    line_cache_offset_ = 0;
    line_cache_line_ = 1;
    line_cache_start_ = 0;
  }
  for (size_t i = line_cache_offset_; i < offset; ++i) {
    if (buf_[i] == '\n') {
      ++line_cache_line_;
      line_cache_start_ = i + 1;
    }
  }
  line_cache_offset_ = offset;
  return ir::Location{file_, line_cache_line_, static_cast<int>(offset - line_cache_start_) + 1};
}

namespace {

bool ValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    const size_t n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return false;
    }
    i += n;
  }
  return true;
}

}  // namespace

std::string CaretLines(std::string_view buf, size_t offset) {
  if (offset > buf.size()) offset = buf.size();
  size_t start = offset;
  while (start > 0 && buf[start - 1] != '\n') --start;
  size_t stop = buf.find('\n', offset);
  if (stop == std::string_view::npos) stop = buf.size();
  constexpr size_t kMaxShown = 200;  // keep messages readable for minified input
  size_t col = offset - start;
  size_t shown_start = col > kMaxShown / 2 ? offset - kMaxShown / 2 : start;
  size_t shown_stop = std::min(stop, shown_start + kMaxShown);
  // Control bytes and bytes of no valid UTF-8 show as '?', so that a
  // message about binary input stays one readable line.
  std::string line(buf.substr(shown_start, shown_stop - shown_start));
  const bool utf8 = ValidUtf8(line);
  for (char& c : line) {
    const auto b = static_cast<unsigned char>(c);
    if ((b < 0x20 && c != '\t') || b == 0x7f || (b >= 0x80 && !utf8)) c = '?';
  }
  std::string caret;
  for (size_t i = shown_start; i < offset; ++i) caret += buf[i] == '\t' ? '\t' : ' ';
  return line + "\n" + caret + "^";
}

Status Parser::ErrorAt(size_t offset, std::string_view message) const {
  return Status(StatusCode::kInvalidArgument,
                std::string(message) + "\n" + CaretLines(buf_, offset))
      .WithLocation(LocationAt(offset).ToString());
}

Status Parser::UnimplementedAt(size_t offset, std::string_view message) const {
  return Status(StatusCode::kUnimplemented, std::string(message) + "\n" + CaretLines(buf_, offset))
      .WithLocation(LocationAt(offset).ToString());
}

Status Parser::Enter() {
  if (++depth_ > kMaxNesting) {
    --depth_;
    return ErrorAt(tok_.offset,
                   "nesting too deep (more than " + std::to_string(kMaxNesting) + " levels)");
  }
  return Status::Ok();
}

void Parser::ResetTo(size_t offset) {
  lexer_.ResetTo(offset);
  Advance();
}

StatusOr<int64_t> Parser::ParseInt64() {
  size_t offset = tok_.offset;
  bool negative = Consume(TokenKind::kMinus);
  if (!tok_.is(TokenKind::kInteger)) return Error("expected an integer");
  std::string_view text = tok_.text;
  uint64_t magnitude = 0;
  bool hex = text.size() > 2 && text[1] == 'x';
  auto [ptr, ec] = std::from_chars(text.data() + (hex ? 2 : 0), text.data() + text.size(),
                                   magnitude, hex ? 16 : 10);
  uint64_t limit = negative ? uint64_t{1} << 63 : std::numeric_limits<int64_t>::max();
  if (ec != std::errc() || magnitude > limit) {
    return ErrorAt(offset, "integer out of range of i64");
  }
  Advance();
  return negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
}

StatusOr<std::vector<int64_t>> Parser::ParseIntList() {
  TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kLSquare, "'['"));
  std::vector<int64_t> out;
  if (Consume(TokenKind::kRSquare)) return out;
  do {
    TPUSIM_ASSIGN_OR_RETURN(int64_t v, ParseInt64());
    out.push_back(v);
  } while (Consume(TokenKind::kComma));
  TPUSIM_RETURN_IF_ERROR(Expect(TokenKind::kRSquare, "']'"));
  return out;
}

Status Parser::Define(std::string_view name, std::vector<ir::Value> values, size_t offset) {
  auto& scope = scopes_.back();
  auto [it, inserted] = scope.emplace(std::string(name), std::move(values));
  if (!inserted) return ErrorAt(offset, "redefinition of SSA value %" + std::string(name));
  return Status::Ok();
}

StatusOr<ir::Value> Parser::ParseValueUse() {
  if (!tok_.is(TokenKind::kPercentId)) return Error("expected an SSA value (%name)");
  std::string_view text = tok_.text.substr(1);
  size_t offset = tok_.offset;
  size_t index = 0;
  size_t hash = text.find('#');
  if (hash != std::string_view::npos) {
    auto [ptr, ec] = std::from_chars(text.data() + hash + 1, text.data() + text.size(), index);
    if (ec != std::errc()) return Error("bad result number");
    text = text.substr(0, hash);
  }
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
    auto found = it->find(std::string(text));
    if (found == it->end()) continue;
    if (index >= found->second.size()) {
      return ErrorAt(offset, "result #" + std::to_string(index) + " of %" + std::string(text) +
                                 " does not exist (it has " + std::to_string(found->second.size()) +
                                 ")");
    }
    Advance();
    return found->second[index];
  }
  return ErrorAt(offset, "use of undefined value %" + std::string(text));
}

Status Parser::CheckType(ir::Value v, const ir::Type& t, size_t offset) const {
  if (v.type() == t) return Status::Ok();
  return ErrorAt(
      offset, "type " + t.ToString() + " does not match the value's type " + v.type().ToString());
}

}  // namespace tpusim::frontend

#include "frontend/stablehlo/lexer.h"

#include <cctype>

namespace tpusim::frontend {
namespace {

bool IsIdStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsBareIdChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.';
}
// Characters of %name, @name, #name, !name and ^name suffixes.
bool IsSuffixIdChar(char c) { return IsBareIdChar(c) || c == '-'; }
bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool IsHexDigit(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

}  // namespace

void Lexer::SkipTrivia() {
  while (pos_ < end_) {
    char c = buf_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++pos_;
    } else if (c == '/' && Peek(1) == '/') {
      while (pos_ < end_ && buf_[pos_] != '\n') ++pos_;
    } else {
      return;
    }
  }
}

// MLIR source locations carry no semantics here; `loc(` is never anything
// else in the grammar, so the group is dropped like a comment.
bool Lexer::SkipLocation() {
  if (!(Peek() == 'l' && Peek(1) == 'o' && Peek(2) == 'c' && Peek(3) == '(')) return false;
  if (pos_ > 0 && IsSuffixIdChar(buf_[pos_ - 1])) return false;
  size_t p = pos_ + 4;
  int depth = 1;
  while (p < end_ && depth > 0) {
    char c = buf_[p++];
    if (c == '(') {
      ++depth;
    } else if (c == ')') {
      --depth;
    } else if (c == '"') {
      while (p < end_ && buf_[p] != '"') p += buf_[p] == '\\' ? 2 : 1;
      ++p;
    }
  }
  if (depth > 0) return false;  // unterminated: lexed as tokens, parser reports it
  pos_ = p;
  return true;
}

Token Lexer::Next() {
  bool after_loc = false;
  for (;;) {
    SkipTrivia();
    if (!SkipLocation()) break;
    after_loc = true;
  }
  Token t = [&] {
    size_t start = pos_;
    if (pos_ >= end_) return Token{TokenKind::kEof, buf_.substr(end_, 0), end_};
    char c = buf_[pos_++];
    switch (c) {
      case '(': return Make(TokenKind::kLParen, start);
      case ')': return Make(TokenKind::kRParen, start);
      case '[': return Make(TokenKind::kLSquare, start);
      case ']': return Make(TokenKind::kRSquare, start);
      case '}': return Make(TokenKind::kRBrace, start);
      case '<': return Make(TokenKind::kLess, start);
      case '>': return Make(TokenKind::kGreater, start);
      case ',': return Make(TokenKind::kComma, start);
      case ':': return Make(TokenKind::kColon, start);
      case '=': return Make(TokenKind::kEqual, start);
      case '?': return Make(TokenKind::kQuestion, start);
      case '*': return Make(TokenKind::kStar, start);
      case '+': return Make(TokenKind::kPlus, start);
      case '{':
        if (Peek() == '-' && Peek(1) == '#') {
          pos_ += 2;
          return Make(TokenKind::kFileMetadataBegin, start);
        }
        return Make(TokenKind::kLBrace, start);
      case '-':
        if (Peek() == '>') {
          ++pos_;
          return Make(TokenKind::kArrow, start);
        }
        return Make(TokenKind::kMinus, start);
      case '"': return LexString(start);
      case '%': return LexPrefixed(TokenKind::kPercentId, start);
      case '@':
        if (Peek() == '"') {
          ++pos_;
          Token s = LexString(pos_ - 1);
          if (s.is(TokenKind::kError)) return s;
          return Make(TokenKind::kAtId, start);
        }
        return LexPrefixed(TokenKind::kAtId, start);
      case '#':
        if (Peek() == '-' && Peek(1) == '}') {
          pos_ += 2;
          return Make(TokenKind::kFileMetadataEnd, start);
        }
        return LexPrefixed(TokenKind::kHashId, start);
      case '!': return LexPrefixed(TokenKind::kBangId, start);
      case '^': return LexPrefixed(TokenKind::kCaretId, start);
      default: break;
    }
    if (IsDigit(c)) return LexNumber(start);
    if (IsIdStart(c)) {
      while (pos_ < end_ && IsBareIdChar(buf_[pos_])) ++pos_;
      return Make(TokenKind::kBareId, start);
    }
    return Make(TokenKind::kError, start);
  }();
  t.after_loc = after_loc;
  return t;
}

Token Lexer::LexPrefixed(TokenKind k, size_t start) {
  size_t first = pos_;
  while (pos_ < end_ && IsSuffixIdChar(buf_[pos_])) ++pos_;
  if (pos_ == first) return Make(TokenKind::kError, start);
  // %0#1 names result 1 of a multi-result op.
  if (k == TokenKind::kPercentId && Peek() == '#' && IsDigit(Peek(1))) {
    ++pos_;
    while (pos_ < end_ && IsDigit(buf_[pos_])) ++pos_;
  }
  return Make(k, start);
}

Token Lexer::LexNumber(size_t start) {
  if (buf_[start] == '0' && Peek() == 'x' && IsHexDigit(Peek(1))) {
    ++pos_;
    while (pos_ < end_ && IsHexDigit(buf_[pos_])) ++pos_;
    return Make(TokenKind::kInteger, start);
  }
  while (pos_ < end_ && IsDigit(buf_[pos_])) ++pos_;
  bool is_float = false;
  if (Peek() == '.') {
    is_float = true;
    ++pos_;
    while (pos_ < end_ && IsDigit(buf_[pos_])) ++pos_;
  }
  // An exponent without a '.' (`1e+20`, as printf's %g writes) is accepted
  // too, beyond MLIR's own grammar.
  if (Peek() == 'e' || Peek() == 'E') {
    size_t digits = (Peek(1) == '+' || Peek(1) == '-') ? 2 : 1;
    if (IsDigit(Peek(digits))) {
      is_float = true;
      pos_ += digits;
      while (pos_ < end_ && IsDigit(buf_[pos_])) ++pos_;
    }
  }
  return Make(is_float ? TokenKind::kFloat : TokenKind::kInteger, start);
}

Token Lexer::LexString(size_t start) {
  while (pos_ < end_) {
    char c = buf_[pos_++];
    if (c == '"') return Make(TokenKind::kString, start);
    if (c == '\\') {
      if (pos_ >= end_) break;
      ++pos_;
    } else if (c == '\n') {
      break;
    }
  }
  return Make(TokenKind::kError, start);
}

bool UnescapeString(std::string_view raw, std::string* out) {
  out->clear();
  if (raw.size() < 2 || raw.front() != '"' || raw.back() != '"') return false;
  std::string_view s = raw.substr(1, raw.size() - 2);
  out->reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\') {
      out->push_back(s[i]);
      continue;
    }
    if (++i >= s.size()) return false;
    char c = s[i];
    if (c == '"' || c == '\\') {
      out->push_back(c);
    } else if (c == 'n') {
      out->push_back('\n');
    } else if (c == 't') {
      out->push_back('\t');
    } else if (i + 1 < s.size() && IsHexDigit(c) && IsHexDigit(s[i + 1])) {
      out->push_back(static_cast<char>(std::stoi(std::string(s.substr(i, 2)), nullptr, 16)));
      ++i;
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace tpusim::frontend

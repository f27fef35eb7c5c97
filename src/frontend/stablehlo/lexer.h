// The MLIR-text lexer of the StableHLO front end: turns a byte range of a
// buffer into tokens with byte offsets. Lexing is on demand, so the parser can
// re-lex from an offset where MLIR's grammar is context dependent (the `x`
// separators of `tensor<2x3xf32>`).
#ifndef TPUSIM_FRONTEND_STABLEHLO_LEXER_H_
#define TPUSIM_FRONTEND_STABLEHLO_LEXER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tpusim::frontend {

enum class TokenKind : uint8_t {
  kEof,
  kError,       // an unlexable character or an unterminated string
  kBareId,      // tensor, f32, stablehlo.add, x3xf32
  kPercentId,   // %0, %arg0, %0#1 (the text keeps the '#1')
  kAtId,        // @main, @"quoted" (text is the raw spelling)
  kHashId,      // #stablehlo.dot, #loc1
  kBangId,      // !stablehlo.token
  kCaretId,     // ^bb0
  kInteger,     // 42, 0x7FC00000
  kFloat,       // 1.5, 1.000000e+00
  kString,      // "text" (text is the raw spelling, quotes included)
  kLParen, kRParen, kLSquare, kRSquare, kLBrace, kRBrace, kLess, kGreater,
  kComma, kColon, kEqual, kArrow, kQuestion, kStar, kPlus, kMinus,
  kFileMetadataBegin,  // {-#
  kFileMetadataEnd,    // #-}
};

struct Token {
  TokenKind kind = TokenKind::kEof;
  std::string_view text;  // a view into the buffer
  size_t offset = 0;      // of text's first byte in the buffer
  bool after_loc = false;  // a skipped `loc(...)` came right before
  bool is(TokenKind k) const { return kind == k; }
  bool IsKeyword(std::string_view k) const { return kind == TokenKind::kBareId && text == k; }
};

// Lexes buffer[begin, end). Comments (`//` to end of line) and `loc(...)`
// source locations are skipped as whitespace.
class Lexer {
 public:
  Lexer(std::string_view buffer, size_t begin, size_t end)
      : buf_(buffer), pos_(begin), end_(end) {}

  Token Next();
  // Continues lexing at `offset` (a position inside the current range).
  void ResetTo(size_t offset) { pos_ = offset; }
  std::string_view buffer() const { return buf_; }

 private:
  void SkipTrivia();
  bool SkipLocation();  // at "loc(": skips the balanced group
  Token Make(TokenKind k, size_t start) const {
    return Token{k, buf_.substr(start, pos_ - start), start};
  }
  Token LexNumber(size_t start);
  Token LexString(size_t start);
  Token LexPrefixed(TokenKind k, size_t start);
  char Peek(size_t ahead = 0) const {
    return pos_ + ahead < end_ ? buf_[pos_ + ahead] : '\0';
  }

  std::string_view buf_;
  size_t pos_;
  size_t end_;
};

// Decodes a kString token's raw spelling (escapes \" \\ \n \t \XX); false
// on a malformed escape.
bool UnescapeString(std::string_view raw, std::string* out);

}  // namespace tpusim::frontend

#endif  // TPUSIM_FRONTEND_STABLEHLO_LEXER_H_

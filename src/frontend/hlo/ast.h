// The XLA HLO text front end, first stage: the text read into a small AST of
// computations and instructions (text.cc), with a character cursor over
// the source (lexer.cc) that every later stage uses to read attribute
// values and to report errors at their offsets. Lowering the AST into the
// tpusim IR is lower.h's job.
#ifndef TPUSIM_FRONTEND_HLO_AST_H_
#define TPUSIM_FRONTEND_HLO_AST_H_

#include <optional>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/ir/ir.h"

namespace tpusim::frontend {

// One parsed buffer: turns byte offsets into locations and located errors.
class HloSource {
 public:
  HloSource(std::string_view text, const std::string& filename);

  std::string_view text() const { return text_; }
  ir::Location LocationAt(size_t offset) const;
  // kInvalidArgument "file:line:col: message", the source line and a caret.
  Status ErrorAt(size_t offset, std::string_view message) const;
  // The same with kUnimplemented, for valid HLO that tpusim does not support.
  Status UnimplementedAt(size_t offset, std::string_view message) const;

 private:
  std::string_view text_;
  std::shared_ptr<const std::string> file_;
  std::vector<size_t> line_starts_;
};

// Reads HLO text in [begin, end) of a source: whitespace and `/*...*/`
// comments are trivia; every read first skips them.
class HloCursor {
 public:
  HloCursor(const HloSource& source, size_t begin, size_t end)
      : src_(source), pos_(begin), end_(end) {}

  size_t pos() const { return pos_; }
  size_t end() const { return end_; }
  void set_pos(size_t pos) { pos_ = pos; }
  const HloSource& source() const { return src_; }
  void SkipTrivia();
  bool AtEnd();
  // The next character after trivia ('\0' at the end).
  char Peek();
  // The character right at the position, trivia included ('\0' at the end).
  char PeekRaw() const { return pos_ < end_ ? src_.text()[pos_] : '\0'; }
  bool Consume(char c);
  bool ConsumeText(std::string_view s);
  Status Expect(char c, std::string_view what);
  // A name: [%]?[A-Za-z0-9_.-]+ (not taking the '-' of "->"); the '%' is
  // dropped. Empty when there is none.
  std::string_view ReadName();
  StatusOr<int64_t> ReadInt();
  // `{1,2,3}` (possibly `{}`).
  StatusOr<std::vector<int64_t>> ReadIntList();
  // The text of one attribute value: up to a top-level ',', whitespace or
  // unbalanced closer, with (), [], {} balanced and "strings" skipped.
  StatusOr<std::string_view> ReadRawValue();
  // At an opening bracket: the text strictly inside it, up to its match.
  StatusOr<std::string_view> ReadBracketed();
  // A `"..."` string, unescaped.
  StatusOr<std::string> ReadString();
  // An HLO shape: `f32[8,16]{1,0}`, `(f32[2], s32[])`, `token[]`; the
  // layout becomes the type's layout (tiling and memory space are dropped).
  StatusOr<ir::Type> ReadShape();

  Status Error(std::string_view message) { return src_.ErrorAt(pos_, message); }
  Status ErrorAt(size_t offset, std::string_view message) const {
    return src_.ErrorAt(offset, message);
  }

 private:
  StatusOr<ir::Type> ReadArrayShape();
  StatusOr<ir::Type> ReadShapeAt(int depth);
  Status SkipBalanced(char open);

  const HloSource& src_;
  size_t pos_;
  size_t end_;
};

// A cursor over exactly the bytes of `text`, a view into the source buffer.
HloCursor CursorOver(const HloSource& source, std::string_view text);

struct HloAttr {
  std::string_view key;
  std::string_view value;  // raw text, a view into the source
  size_t key_offset = 0;
};

struct HloOperandRef {
  std::string_view name;  // without '%'
  size_t offset = 0;
  std::optional<ir::Type> type;  // the shape written before the name, if any
  size_t type_offset = 0;
};

struct HloInstruction {
  std::string_view name;  // without '%'
  size_t offset = 0;      // of the name: the instruction's location
  bool is_root = false;
  ir::Type type;
  std::string_view opcode;
  size_t opcode_offset = 0;
  // The text inside the parentheses after the opcode; for constant and
  // parameter it is a literal, for the others a list of operand names.
  std::string_view args;
  std::vector<HloOperandRef> operands;
  std::vector<HloAttr> attrs;

  // The attribute named `key`, or null.
  const HloAttr* Attr(std::string_view key) const;
};

struct HloComputation {
  std::string_view name;
  size_t offset = 0;
  bool is_entry = false;
  std::vector<HloInstruction> instructions;
  std::unordered_map<std::string_view, int> by_name;
  int root = -1;                // index into instructions
  std::vector<int> parameters;  // parameter number -> instruction index
};

struct HloModuleAst {
  std::string_view name;
  size_t offset = 0;
  std::vector<HloAttr> attrs;  // of the HloModule header
  std::vector<HloComputation> computations;
  std::unordered_map<std::string_view, int> by_name;
  int entry = -1;
};

// Reads the whole text into an AST: syntax, name resolution within each
// computation, one ROOT and dense parameter numbers. Operand and shape
// semantics are left to the lowering.
StatusOr<HloModuleAst> ParseHloText(const HloSource& source);

// XLA's element type names (pred, s32, bf16, f8e4m3fn, ...); nullopt if not
// one tpusim models.
std::optional<ir::ElementType> HloElementType(std::string_view name);

}  // namespace tpusim::frontend

#endif  // TPUSIM_FRONTEND_HLO_AST_H_

// The recursive-descent parser behind ParseStableHlo. One Parser reads one
// module from a byte range of a buffer. Its methods are split by topic:
//   parser.cc          tokens, errors, value scopes
//   parse_types.cc     types and function types
//   parse_attributes.cc  attributes, #stablehlo.* structs, aliases
//   parse_sdy.cc       Shardy's attributes (#sdy.sharding, meshes, rules)
//   parse_dense.cc     dense<...> literals
//   parse_ops.cc       generic op form, regions, blocks
//   pretty_items.cc    the item grammar shared by pretty op forms
//   pretty_ops.cc      the table of pretty op forms (custom_forms.cc: the
//                      forms with their own grammar: reduce, while, scan)
//   parse_module.cc    module, func.func, entry points
//   sdy_round_trip.cc  Shardy's round-trip form read back into sdy
#ifndef TPUSIM_FRONTEND_STABLEHLO_PARSER_INTERNAL_H_
#define TPUSIM_FRONTEND_STABLEHLO_PARSER_INTERNAL_H_

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "frontend/stablehlo/lexer.h"
#include "tpusim/base/status.h"
#include "tpusim/ir/ir.h"

namespace tpusim::frontend {

// Deepest nesting of regions, types and attributes; deeper input is rejected
// rather than risking the stack.
inline constexpr int kMaxNesting = 200;

// Largest tensor element count accepted: keeps byte sizes (count * 16) in
// int64. Shared by every text front end.
inline constexpr int64_t kMaxElements = std::numeric_limits<int64_t>::max() / 32;

// The source line of `buf` around `offset` and a caret under it, for error
// messages (long lines are cut around the caret).
std::string CaretLines(std::string_view buf, size_t offset);

// Whether `module` carries Shardy's round-trip form (xla.sdy.meshes in its
// mhlo.frontend_attributes), and its import into the native sdy form
// (sdy_round_trip.cc); errors name the op whose attribute is malformed.
bool UsesSdyRoundTrip(const ir::Module& module);
Status ImportSdyRoundTrip(ir::Module& module);

// An operation being built by a pretty-form parser: positional items and
// `key = value` items in source order, then the trailing types.
struct PrettyOp {
  std::unique_ptr<ir::Operation> op;
  std::vector<ir::Value> operands;
  std::vector<std::pair<std::string, ir::Attribute>> keywords;  // key = value
  std::vector<std::string> idents;                               // bare words (EQ, FLOAT)
  std::vector<ir::Attribute> literals;                           // dense<..>, @sym, "str"
  bool has_index_group = false;
  std::vector<std::vector<int64_t>> index_group;  // `[0:2, 1:3:1]` or `[0]`: 1-3 numbers per entry
  // The trailing signature: `(a, b) -> c` or `a, b -> c` fill both lists
  // (functional = true); a bare `a, b` fills type_list only.
  bool functional = false;
  std::vector<ir::Type> type_list;
  std::vector<ir::Type> operand_types;
  std::vector<ir::Type> result_types;
  size_t name_offset = 0;
  size_t signature_offset = 0;
};

class Parser {
 public:
  Parser(std::string_view buffer, size_t begin, size_t end,
         std::shared_ptr<const std::string> filename);

  // The whole range as one module (see ParseStableHlo).
  StatusOr<std::unique_ptr<ir::Module>> ParseTopLevel();

  // ---- tokens and errors (parser.cc) ----
  const Token& tok() const { return tok_; }
  void Advance() { tok_ = lexer_.Next(); }
  bool Consume(TokenKind k);
  bool ConsumeKeyword(std::string_view k);
  Status Expect(TokenKind k, std::string_view what);
  Status ExpectKeyword(std::string_view k);
  // kInvalidArgument located at `offset`, with the source line and a caret.
  Status ErrorAt(size_t offset, std::string_view message) const;
  Status Error(std::string_view message) const { return ErrorAt(tok_.offset, message); }
  Status UnimplementedAt(size_t offset, std::string_view message) const;
  ir::Location LocationAt(size_t offset) const;
  // Bounds recursion; pair every successful Enter with Leave.
  Status Enter();
  void Leave() { --depth_; }
  // Re-lexes from `offset` (for `2x3xf32`-style splitting).
  void ResetTo(size_t offset);

  // ---- integers ----
  // Parses an optionally negative integer literal that fits int64.
  StatusOr<int64_t> ParseInt64();
  // `[1, 2, 3]` (possibly empty).
  StatusOr<std::vector<int64_t>> ParseIntList();

  // ---- types (parse_types.cc) ----
  StatusOr<ir::Type> ParseType();
  StatusOr<ir::ElementType> ParseElementType();
  // The type of a dense attribute: as ParseType, but MLIR's `index` element
  // type (operand_layouts = [dense<[1, 0]> : tensor<2xindex>]) is read as
  // i64, the width tpusim gives index values; programs' own values may not
  // be index-typed.
  StatusOr<ir::Type> ParseAttributeType();
  // `(a, b) -> c`, `(a) -> (b, c)`, `() -> ()`.
  Status ParseFunctionType(std::vector<ir::Type>* inputs, std::vector<ir::Type>* results);
  // A parenthesized or single result type list after `->`.
  Status ParseResultTypes(std::vector<ir::Type>* results);
  // `t1, t2, ...` (at least one).
  Status ParseTypeList(std::vector<ir::Type>* types);
  bool AtTypeStart() const;

  // ---- attributes (parse_attributes.cc) ----
  StatusOr<ir::Attribute> ParseAttribute();
  // `{a = 1, b}` into `map` (keys may be bare, quoted or dotted).
  Status ParseAttributeDict(ir::AttributeMap* map);
  StatusOr<std::vector<ir::NamedAttribute>> ParseDictEntries();
  // Body of `#ns.name<...>` after the '<' for the structured attributes;
  // also used for pretty `algorithm = <...>`.
  StatusOr<ir::Attribute> ParseStructBody(const std::string& name);
  // The raw convolution layout `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`.
  StatusOr<ir::Attribute> ParseConvDimensionNumbers();
  // At a kHashId: an enum, a struct or an alias use.
  StatusOr<ir::Attribute> ParseHashAttribute();

  // ---- Shardy attributes (parse_sdy.cc) ----
  // `[<@mesh, [...]>, ...]`: a "sdy.sharding_per_value" struct.
  StatusOr<ir::Attribute> ParseSdyShardingList();
  // `<@mesh, [...]>`: a "sdy.sharding" struct.
  StatusOr<ir::Attribute> ParseSdyShardingBrackets();
  // After the '<' of `#sdy.sharding<...>`, through the '>'.
  StatusOr<ir::Attribute> ParseSdyShardingBody();
  // After the '<' of `#sdy.mesh<...>` / `sdy.mesh @m = <...>`, through the '>'.
  StatusOr<ir::Attribute> ParseSdyMeshBody();
  // After the '<' of `#sdy.op_sharding_rule<...>`, through the '>'.
  StatusOr<ir::Attribute> ParseSdyRuleBody();
  // `{"x", "y"}`: a "sdy.manual_axes" struct.
  StatusOr<ir::Attribute> ParseSdyAxisSet();
  // `"x"` or the sub-axis `"x":(1)2`.
  StatusOr<ir::Attribute> ParseSdyAxisRef();
  // Axis refs up to the '}' (the '{' read); `open` (when not null) allows
  // and reports a trailing `?`.
  StatusOr<ir::Attribute> ParseSdyAxisList(bool* open);
  // Defines `#name = attr` / `!name = type` at the top level.
  Status ParseAliasDefinition();

  // ---- dense literals (parse_dense.cc) ----
  // At `dense`: `dense<...> : type`.
  StatusOr<ir::Attribute> ParseDenseElements();
  // At '<' after `dense`, with the type known (check.expect_eq_const).
  StatusOr<ir::Attribute> ParseDenseBodyThenType();

  // ---- operations and regions (parse_ops.cc) ----
  // Operations up to the closing '}' of the enclosing region.
  Status ParseOperations(ir::Block* block);
  Status ParseOperation(ir::Block* block);
  // `{ [^bb0(args):] ops }`; `entry_args` (name, type) are the entry block's
  // arguments for pretty forms whose region header is implicit.
  Status ParseRegion(ir::Region* region,
                     const std::vector<std::pair<std::string, ir::Type>>& entry_args);
  // A `%name` or `%name#i` use of a value defined earlier in scope.
  StatusOr<ir::Value> ParseValueUse();
  Status CheckType(ir::Value v, const ir::Type& t, size_t offset) const;

  // ---- pretty forms (pretty_ops.cc, custom_forms.cc) ----
  Status ParsePrettyOp(std::string_view name, PrettyOp* p);
  // The common pretty grammar: items, optional attr-dict, `:` signature.
  Status ParsePrettyItems(PrettyOp* p);
  Status ParsePrettySignature(PrettyOp* p);
  StatusOr<ir::Attribute> ParsePrettyValue(std::string_view key);
  Status ParseReduce(PrettyOp* p);
  Status ParseWhile(PrettyOp* p);
  Status ParseScan(PrettyOp* p);
  Status ParseManualComputation(PrettyOp* p);
  Status ParseSdyConstraint(PrettyOp* p);

  // ---- value scopes ----
  void PushScope() { scopes_.emplace_back(); }
  void PopScope() { scopes_.pop_back(); }
  Status Define(std::string_view name, std::vector<ir::Value> values, size_t offset);

  // ---- module level (parse_module.cc) ----
  Status ParseFunction(ir::Module* module);
  Status ParseModuleBody(ir::Module* module);
  Status ParseMesh(ir::Module* module);

  std::map<std::string, ir::Attribute, std::less<>>& attr_aliases() { return attr_aliases_; }
  std::map<std::string, ir::Type, std::less<>>& type_aliases() { return type_aliases_; }

 private:
  std::string_view buf_;
  std::shared_ptr<const std::string> file_;
  Lexer lexer_;
  Token tok_;
  int depth_ = 0;
  bool index_as_i64_ = false;  // inside ParseAttributeType
  mutable size_t line_cache_offset_ = 0;  // LocationAt's resume point
  mutable int line_cache_line_ = 1;
  mutable size_t line_cache_start_ = 0;
  std::vector<std::unordered_map<std::string, std::vector<ir::Value>>> scopes_;
  std::map<std::string, ir::Attribute, std::less<>> attr_aliases_;
  std::map<std::string, ir::Type, std::less<>> type_aliases_;
};

// Enter/Leave as a scope; check ok() right after construction.
class NestingGuard {
 public:
  explicit NestingGuard(Parser* p) : p_(p), status_(p->Enter()) {}
  ~NestingGuard() {
    if (status_.ok()) p_->Leave();
  }
  const Status& status() const { return status_; }

 private:
  Parser* p_;
  Status status_;
};

#define TPUSIM_NESTING_GUARD(parser)                  \
  ::tpusim::frontend::NestingGuard _nesting(parser);  \
  if (!_nesting.status().ok()) return _nesting.status()

}  // namespace tpusim::frontend

#endif  // TPUSIM_FRONTEND_STABLEHLO_PARSER_INTERNAL_H_

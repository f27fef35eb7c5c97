// Pieces of the HLO printer shared by its files: XLA's spelling of shapes and
// literals (printer_shapes.cc) and of each op's opcode and attributes
// (printer_ops.cc; calls, custom calls and collectives in
// printer_calls.cc). printer.cc walks the module and lays out
// computations, names and the tuples HLO needs where StableHLO has lists.
#ifndef TPUSIM_FRONTEND_HLO_PRINTER_INTERNAL_H_
#define TPUSIM_FRONTEND_HLO_PRINTER_INTERNAL_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/ir/ir.h"

namespace tpusim::frontend::hlo {

// XLA's element type name: "pred", "s32", "u8", "bf16", "f8e4m3fn", "c64".
std::string_view HloTypeName(ir::ElementType t);

// "f32[8,16]{1,0}", "f32[]", "(f32[2]{0}, s32[])", "token[]". Without the
// layout as computation signatures print it: "f32[8,16]".
std::string ShapeString(const ir::Type& type, bool with_layout = true);

// The literal of a dense elements attribute as XLA prints it inside
// `constant(...)`: "1.5", "{1, 2}", "{ { 1, 2 }, { 3, 4 } }", "true".
std::string LiteralString(const ir::Attribute& dense);

// "{1,0}" style list: XLA joins integer lists with bare commas.
std::string IntList(const std::vector<int64_t>& v);

// The HLO spelling of one op apart from its operands and called computations.
struct HloForm {
  std::string opcode;
  // Printed inside the parentheses instead of the operands (a constant's literal).
  std::optional<std::string> inline_args;
  std::vector<std::string> attrs;        // "dimensions={1}", before called computations
  std::vector<std::string> region_keys;  // per region, in order: "to_apply", "select", ...
  std::vector<std::string> attrs_after;  // after called computations
};

// Looks up the HLO computation name of a function of the module.
using ComputationNameFn = std::function<std::string(std::string_view function)>;

// The HLO form of `op`, whose operands and results map one to one onto the
// HLO instruction's (the caller tuples several results). nullopt when the op
// has no such form; kUnimplemented when it has one but not with these
// attributes (the message names the attribute).
StatusOr<std::optional<HloForm>> DescribeOp(const ir::Operation& op,
                                            const ComputationNameFn& computation_name);

// ---- for the op spellings (printer_ops.cc defines these) ----

HloForm Form(std::string opcode, std::vector<std::string> attrs = {});
// Attribute `key` of `op` read leniently: absent or of another kind gives
// the empty list / `fallback` / false.
std::vector<int64_t> GetInts(const ir::Operation& op, std::string_view key);
int64_t GetInt(const ir::Operation& op, std::string_view key, int64_t fallback);
bool GetFlag(const ir::Operation& op, std::string_view key);  // unit or true
// Integer field `key` of a struct attribute.
int64_t FieldInt(const ir::Attribute& s, std::string_view key, int64_t fallback);
// A double-quoted string escaped as absl::CEscape does.
std::string Quote(const std::string& s);
// kUnimplemented: `what` of `op`, at its location, has no HLO spelling.
Status Unsupported(const ir::Operation& op, const std::string& what);

using Describer = StatusOr<HloForm> (*)(const ir::Operation&, const ComputationNameFn&);
using DescriberTable = std::unordered_map<std::string_view, Describer>;
// Adds the spellings of calls, custom calls and collectives.
void AddCallForms(DescriberTable& table);

}  // namespace tpusim::frontend::hlo

#endif  // TPUSIM_FRONTEND_HLO_PRINTER_INTERNAL_H_

// The StableHLO text front end: reads MLIR text as JAX and the stablehlo
// tools print it (pretty and generic op forms) into the tpusim IR.
#ifndef TPUSIM_FRONTEND_STABLEHLO_PARSER_H_
#define TPUSIM_FRONTEND_STABLEHLO_PARSER_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tpusim/base/status.h"
#include "tpusim/ir/ir.h"

namespace tpusim::frontend {

// Parses one module: `module @name attributes {...} { func.func ... }`, or
// bare top-level func.func definitions (an implicit module; empty input is an
// empty module). Pretty op forms are normalized to the generic form's
// attributes and regions, `loc(...)` and `#loc` aliases are skipped, and
// every function is Renumber()ed. Operation::loc() is the op's first token
// (its first result name, if any). `sdy.mesh` ops are kept in the module
// attribute "sdy.meshes" (see ir/sharding.h).
// Errors are kInvalidArgument ("file:line:col: message", then the source line
// and a caret under the offending text) or kUnimplemented (e.g. dynamic shapes).
// The module is not verified; run verify::VerifyModule next.
StatusOr<std::unique_ptr<ir::Module>> ParseStableHlo(std::string_view text,
                                                     const std::string& filename);

// One `// -----`-separated case of a multi-case file.
struct ParsedCase {
  int first_line = 1;  // line of the case's first line in the whole file
  StatusOr<std::unique_ptr<ir::Module>> module = Status(StatusCode::kInternal, "unparsed");
};

// Splits `text` on lines that are exactly `// -----` and parses each part;
// locations are those of the whole file. A file without separators gives one
// case. Each case parses (or fails) independently.
std::vector<ParsedCase> ParseStableHloCases(std::string_view text,
                                            const std::string& filename);

}  // namespace tpusim::frontend

#endif  // TPUSIM_FRONTEND_STABLEHLO_PARSER_H_

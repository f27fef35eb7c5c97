// The XLA HLO text front end: reads HloModule text as XLA dumps it
// (XLA_FLAGS=--xla_dump_to, before or after optimization) into the tpusim IR,
// so every later stage works on it as on StableHLO.
#ifndef TPUSIM_FRONTEND_HLO_PARSER_H_
#define TPUSIM_FRONTEND_HLO_PARSER_H_

#include <memory>
#include <string>
#include <string_view>

#include "tpusim/base/status.h"
#include "tpusim/ir/ir.h"

namespace tpusim::frontend {

// Parses one `HloModule name, ...` and its computations. The ENTRY
// computation becomes the public function @main, the others private
// functions; fusion computations become tpusim.fusion ops' bodies, tuples
// and get-tuple-element their StableHLO ops, layouts ir::Type layouts.
// Errors are kInvalidArgument "file:line:col: message" with the source line
// and a caret, or kUnimplemented naming the unsupported construct.
// The module is not verified; run verify::VerifyModule next.
StatusOr<std::unique_ptr<ir::Module>> ParseHlo(std::string_view text,
                                               const std::string& filename);

// Whether `text` looks like HLO text (starts with `HloModule`, after
// comments and blank lines) rather than MLIR.
bool LooksLikeHlo(std::string_view text);

}  // namespace tpusim::frontend

#endif  // TPUSIM_FRONTEND_HLO_PARSER_H_

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

// Parses one `HloModule name, ...` and its computations, in either dump
// style (`%` sigils and inline operand shapes or not). The ENTRY computation
// becomes the public function @main, computations `call`ed private
// functions; `to_apply`/`condition`/`body`/branch computations become the
// regions of their ops, fusion computations tpusim.fusion bodies. A tuple
// root becomes several results, get-tuple-element and tuple their StableHLO
// ops where a whole tuple is needed, async start/done pairs the synchronous
// op, layouts ir::Type layouts, `sharding=` mhlo.sharding attributes. Ops
// are located at their instruction's name; every function is Renumber()ed.
// Errors are kInvalidArgument "file:line:col: message" with the source line
// and a caret, kUnimplemented naming an unsupported opcode or attribute, or
// kResourceExhausted when reused bodies would inline to a huge module.
// The module is not verified; run verify::VerifyModule next.
StatusOr<std::unique_ptr<ir::Module>> ParseHlo(std::string_view text,
                                               const std::string& filename);

// Whether `text` looks like HLO text (starts with `HloModule`, after
// comments and blank lines) rather than MLIR.
bool LooksLikeHlo(std::string_view text);

}  // namespace tpusim::frontend

#endif  // TPUSIM_FRONTEND_HLO_PARSER_H_

// ParseHlo and LooksLikeHlo: the HLO text front end's entry points.
#include "tpusim/frontend/hlo/parser.h"

#include "frontend/hlo/ast.h"
#include "frontend/hlo/lower.h"

namespace tpusim::frontend {

StatusOr<std::unique_ptr<ir::Module>> ParseHlo(std::string_view text, const std::string& filename) {
  HloSource source(text, filename);
  TPUSIM_ASSIGN_OR_RETURN(HloModuleAst ast, ParseHloText(source));
  auto module = std::make_unique<ir::Module>();
  HloLowering lowering(source, ast, module.get());
  TPUSIM_RETURN_IF_ERROR(lowering.LowerModule());
  return module;
}

bool LooksLikeHlo(std::string_view text) {
  HloSource source(text, "");
  HloCursor c(source, 0, text.size());
  c.SkipTrivia();
  return text.substr(c.pos()).starts_with("HloModule");
}

}  // namespace tpusim::frontend

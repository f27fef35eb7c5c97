// HLO text -> HloModuleAst: the module header, computations and their
// instructions, as XLA's HloModule::ToString prints them (and its parser
// reads them): `%` sigils optional, operand shapes optional, attributes kept
// as raw text for the lowering to read.
#include "frontend/hlo/ast.h"

namespace tpusim::frontend {

const HloAttr* HloInstruction::Attr(std::string_view key) const {
  for (const HloAttr& a : attrs) {
    if (a.key == key) return &a;
  }
  return nullptr;
}

namespace {

// Opcodes whose parenthesized text is a literal rather than operand names.
bool TakesLiteral(std::string_view opcode) { return opcode == "constant" || opcode == "parameter"; }

class TextParser {
 public:
  explicit TextParser(const HloSource& src) : src_(src), c_(src, 0, src.text().size()) {}

  StatusOr<HloModuleAst> Parse() {
    HloModuleAst m;
    c_.SkipTrivia();
    m.offset = c_.pos();
    if (c_.ReadName() != "HloModule") return c_.ErrorAt(m.offset, "expected 'HloModule'");
    m.name = c_.ReadName();
    if (m.name.empty()) return c_.Error("expected the module's name");
    TPUSIM_RETURN_IF_ERROR(ReadAttrs(&m.attrs));
    while (!c_.AtEnd()) {
      HloComputation comp;
      TPUSIM_RETURN_IF_ERROR(ReadComputation(&comp));
      int index = static_cast<int>(m.computations.size());
      if (!m.by_name.emplace(comp.name, index).second) {
        return c_.ErrorAt(comp.offset,
                          "computation %" + std::string(comp.name) + " is defined twice");
      }
      if (comp.is_entry) {
        if (m.entry >= 0) return c_.ErrorAt(comp.offset, "a second ENTRY computation");
        m.entry = index;
      }
      m.computations.push_back(std::move(comp));
    }
    if (m.computations.empty()) return c_.Error("the module has no computations");
    // Without an ENTRY marker XLA takes the last computation.
    if (m.entry < 0) m.entry = static_cast<int>(m.computations.size()) - 1;
    return m;
  }

 private:
  // `, key=value` pairs.
  Status ReadAttrs(std::vector<HloAttr>* attrs) {
    while (c_.Consume(',')) {
      c_.SkipTrivia();
      HloAttr a;
      a.key_offset = c_.pos();
      a.key = c_.ReadName();
      if (a.key.empty()) return c_.Error("expected an attribute name");
      TPUSIM_RETURN_IF_ERROR(c_.Expect('=', "'=' after attribute '" + std::string(a.key) + "'"));
      TPUSIM_ASSIGN_OR_RETURN(a.value, c_.ReadRawValue());
      attrs->push_back(a);
    }
    return Status::Ok();
  }

  Status ReadComputation(HloComputation* comp) {
    c_.SkipTrivia();
    size_t start = c_.pos();
    std::string_view word = c_.ReadName();
    if (word == "ENTRY") {
      comp->is_entry = true;
      c_.SkipTrivia();
      start = c_.pos();
      word = c_.ReadName();
    }
    if (word.empty()) return c_.Error("expected a computation");
    comp->name = word;
    comp->offset = start;
    if (c_.Peek() == '(') {
      // The signature repeats the parameter instructions' shapes.
      TPUSIM_RETURN_IF_ERROR(c_.ReadBracketed().status());
      if (!c_.ConsumeText("->")) return c_.Error("expected '->' and the result shape");
      TPUSIM_RETURN_IF_ERROR(c_.ReadShape().status());
    }
    TPUSIM_RETURN_IF_ERROR(c_.Expect('{', "'{' opening computation %" + std::string(word)));
    while (!c_.Consume('}')) {
      if (c_.AtEnd())
        return c_.ErrorAt(start, "computation %" + std::string(word) + " is never closed");
      HloInstruction inst;
      TPUSIM_RETURN_IF_ERROR(ReadInstruction(&inst));
      TPUSIM_RETURN_IF_ERROR(Add(comp, std::move(inst)));
    }
    std::vector<HloAttr> trailing;  // execution_thread="..."
    TPUSIM_RETURN_IF_ERROR(ReadAttrs(&trailing));
    if (comp->instructions.empty()) return c_.ErrorAt(start, "computation has no instructions");
    // Without a ROOT marker the last instruction is the root.
    if (comp->root < 0) comp->root = static_cast<int>(comp->instructions.size()) - 1;
    for (size_t i = 0; i < comp->parameters.size(); ++i) {
      if (comp->parameters[i] < 0) {
        return c_.ErrorAt(start, "computation %" + std::string(word) + " lacks parameter(" +
                                     std::to_string(i) + ")");
      }
    }
    return Status::Ok();
  }

  Status Add(HloComputation* comp, HloInstruction inst) {
    int index = static_cast<int>(comp->instructions.size());
    if (!comp->by_name.emplace(inst.name, index).second) {
      return c_.ErrorAt(inst.offset,
                        "instruction %" + std::string(inst.name) + " is defined twice");
    }
    if (inst.is_root) {
      if (comp->root >= 0) return c_.ErrorAt(inst.offset, "a second ROOT instruction");
      comp->root = index;
    }
    if (inst.opcode == "parameter") TPUSIM_RETURN_IF_ERROR(AddParameter(comp, inst, index));
    comp->instructions.push_back(std::move(inst));
    return Status::Ok();
  }

  Status AddParameter(HloComputation* comp, const HloInstruction& inst, int index) {
    HloCursor c = CursorOver(src_, inst.args);
    TPUSIM_ASSIGN_OR_RETURN(int64_t number, c.ReadInt());
    if (!c.AtEnd()) return c.Error("expected ')' after the parameter number");
    // Parameters are numbered densely, so the count bounds the number.
    if (number < 0 || number > 100000) {
      return c.ErrorAt(inst.offset,
                       "parameter number " + std::to_string(number) + " is out of range");
    }
    if (comp->parameters.size() <= static_cast<size_t>(number)) {
      comp->parameters.resize(number + 1, -1);
    }
    if (comp->parameters[number] >= 0) {
      return c.ErrorAt(inst.offset, "parameter(" + std::to_string(number) + ") appears twice");
    }
    comp->parameters[number] = index;
    return Status::Ok();
  }

  Status ReadInstruction(HloInstruction* inst) {
    c_.SkipTrivia();
    inst->offset = c_.pos();
    inst->name = c_.ReadName();
    if (inst->name == "ROOT" && c_.Peek() != '=') {
      inst->is_root = true;
      c_.SkipTrivia();
      inst->offset = c_.pos();
      inst->name = c_.ReadName();
    }
    if (inst->name.empty()) return c_.Error("expected an instruction");
    TPUSIM_RETURN_IF_ERROR(c_.Expect('=', "'=' after the instruction name"));
    TPUSIM_ASSIGN_OR_RETURN(inst->type, c_.ReadShape());
    c_.SkipTrivia();
    inst->opcode_offset = c_.pos();
    inst->opcode = c_.ReadName();
    if (inst->opcode.empty()) return c_.Error("expected an opcode");
    if (c_.Peek() != '(') return c_.Error("expected '(' after the opcode");
    TPUSIM_ASSIGN_OR_RETURN(inst->args, c_.ReadBracketed());
    if (!TakesLiteral(inst->opcode)) TPUSIM_RETURN_IF_ERROR(ReadOperands(inst));
    return ReadAttrs(&inst->attrs);
  }

  // `%a, f32[8]{0} %b, /*index=2*/(f32[], s32[]) c`: names, each optionally
  // after its shape, which must be the defining instruction's (lowering
  // checks it).
  Status ReadOperands(HloInstruction* inst) {
    HloCursor c = CursorOver(src_, inst->args);
    if (c.AtEnd()) return Status::Ok();
    do {
      c.SkipTrivia();
      const size_t start = c.pos();
      std::string_view name;
      std::optional<ir::Type> type;
      if (c.PeekRaw() == '(') {
        TPUSIM_ASSIGN_OR_RETURN(type, c.ReadShape());
        name = c.ReadName();
      } else {
        name = c.ReadName();
        if (!name.empty() && c.PeekRaw() == '[') {
          c.set_pos(start);
          TPUSIM_ASSIGN_OR_RETURN(type, c.ReadShape());
          name = c.ReadName();
        }
      }
      if (name.empty()) return c.Error("expected an operand name");
      inst->operands.push_back({.name = name,
                                .offset = static_cast<size_t>(name.data() - src_.text().data()),
                                .type = std::move(type),
                                .type_offset = start});
    } while (c.Consume(','));
    if (!c.AtEnd()) return c.Error("expected ',' or ')' after an operand");
    return Status::Ok();
  }

  const HloSource& src_;
  HloCursor c_;
};

}  // namespace

StatusOr<HloModuleAst> ParseHloText(const HloSource& source) { return TextParser(source).Parse(); }

}  // namespace tpusim::frontend

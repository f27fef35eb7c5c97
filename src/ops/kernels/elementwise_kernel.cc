// Shape-rule helpers of elementwise_kernel.h.
#include "ops/kernels/elementwise_kernel.h"

namespace tpusim::ops::ew {

bool InClass(ir::ElementType t, unsigned classes) {
  return ((classes & kBoolTypes) && ir::IsBool(t)) ||
         ((classes & kSignedTypes) && ir::IsSignedInt(t)) ||
         ((classes & kUnsignedTypes) && ir::IsUnsignedInt(t)) ||
         ((classes & kFloatTypes) && ir::IsFloat(t)) ||
         ((classes & kComplexTypes) && ir::IsComplex(t));
}

std::string ClassName(unsigned classes) {
  std::vector<std::string> names;
  if (classes & kBoolTypes) names.push_back("boolean");
  if ((classes & kIntTypes) == kIntTypes) {
    names.push_back("integer");
  } else if (classes & kSignedTypes) {
    names.push_back("signed integer");
  } else if (classes & kUnsignedTypes) {
    names.push_back("unsigned integer");
  }
  if (classes & kFloatTypes) names.push_back("floating-point");
  if (classes & kComplexTypes) names.push_back("complex");
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) s += i + 1 == names.size() ? " or " : ", ";
    s += names[i];
  }
  return s;
}

Status BadElementType(const ir::Operation& op, ir::ElementType t, unsigned classes) {
  return InvalidArgument("'" + op.name_str() + "' needs a tensor of " + ClassName(classes) +
                         " type, got element type " + std::string(ir::ElementTypeName(t)));
}

Status VerifySameType(const ir::Operation& op, int num_operands, unsigned classes) {
  TPUSIM_RETURN_IF_ERROR(ExpectNumOperands(op, num_operands));
  TPUSIM_RETURN_IF_ERROR(ExpectNumResults(op, 1));
  TPUSIM_RETURN_IF_ERROR(ExpectAllTensors(op));
  const ir::Type& type = op.operand(0).type();
  if (!InClass(type.element(), classes)) return BadElementType(op, type.element(), classes);
  for (int i = 1; i < num_operands; ++i) {
    if (op.operand(i).type() != type) {
      return InvalidArgument("'" + op.name_str() + "' operands must have one type, got " +
                             type.ToString() + " and " + op.operand(i).type().ToString());
    }
  }
  return ExpectResultType(op, 0, type);
}

Status CheckSameSize(const ir::Operation& op, std::span<const Tensor> operands,
                     bool allow_splats) {
  if (static_cast<int>(operands.size()) != op.num_operands() || op.num_results() != 1 ||
      !op.result(0).type().is_tensor()) {
    return Internal("'" + op.name_str() + "' evaluated with malformed operands");
  }
  const ir::Type& result = op.result(0).type();
  for (size_t i = 0; i < operands.size(); ++i) {
    const Tensor& t = operands[i];
    if (allow_splats && IsSplatPlaceholder(t, result.num_elements()) &&
        t.element() == result.element()) {
      continue;  // one element standing for all (OpDef::splat_operands)
    }
    if (!t.type().is_tensor() || t.element() != result.element() ||
        t.num_elements() != result.num_elements()) {
      return Internal("'" + op.name_str() + "' operand " + t.type().ToString() +
                      " does not match its result " + result.ToString() +
                      "; was the module verified?");
    }
  }
  return Status::Ok();
}

}  // namespace tpusim::ops::ew

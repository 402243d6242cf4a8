//===- ValueDomainOpInterface.cpp - where an op is defined ----------------===//

#include "shardc/Dialect/ValueDomainOpInterface.h"

#include "shardc/Dialect/ValueDomainOpInterface.cpp.inc"

using namespace mlir;

namespace shardc {

// The interface's methods are static: its concept (the op's model) answers
// without an op instance.
OperandDomain getOperandDomain(OperationName name, unsigned operand) {
  if (auto *model = name.getInterface<ValueDomainOpInterface>())
    return model->getOperandDomain(operand);
  return OperandDomain();
}

bool isCorrectlyRounded(OperationName name) {
  if (auto *model = name.getInterface<ValueDomainOpInterface>())
    return model->isCorrectlyRounded();
  return false;
}

Continuity getContinuity(OperationName name) {
  if (auto *model = name.getInterface<ValueDomainOpInterface>())
    return model->getContinuity();
  return Continuity::Continuous;
}

} // namespace shardc

//===- TrainingAccounting.cpp - bytes per role, recompute's modes ---------===//

#include "shardc/Analysis/TrainingAccounting.h"

#include "llvm/ADT/StringSwitch.h"

using namespace shardc;

std::optional<Precision> shardc::parsePrecision(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<Precision>>(name)
      .Case("f32", Precision::F32)
      .Case("bf16-mixed", Precision::BF16Mixed)
      .Case("f16-mixed", Precision::F16Mixed)
      .Default(std::nullopt);
}

std::optional<Recompute> shardc::parseRecompute(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<Recompute>>(name)
      .Case("none", Recompute::None)
      .Case("selective", Recompute::Selective)
      .Case("full", Recompute::Full)
      .Default(std::nullopt);
}

llvm::StringRef shardc::precisionName(Precision p) {
  switch (p) {
  case Precision::F32:
    return "f32";
  case Precision::BF16Mixed:
    return "bf16-mixed";
  case Precision::F16Mixed:
    return "f16-mixed";
  }
  return "";
}

llvm::StringRef shardc::recomputeName(Recompute r) {
  switch (r) {
  case Recompute::None:
    return "none";
  case Recompute::Selective:
    return "selective";
  case Recompute::Full:
    return "full";
  }
  return "";
}

RoleBytes shardc::roleBytes(Precision p) {
  switch (p) {
  case Precision::F32:
    return {4, 4, 4, 4, 0, ComputeType::F32};
  case Precision::BF16Mixed:
    return {2, 2, 2, 4, 4, ComputeType::BF16};
  case Precision::F16Mixed:
    return {2, 2, 2, 4, 4, ComputeType::F16};
  }
  return {4, 4, 4, 4, 0, ComputeType::F32};
}

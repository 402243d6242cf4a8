//===- MeshBackend.cpp - backend names ------------------------------------===//

#include "shardc/Runtime/MeshBackend.h"

#include "llvm/ADT/StringSwitch.h"

using namespace shardc;

MeshBackend::~MeshBackend() = default;

llvm::StringRef shardc::stringifyBackendKind(BackendKind kind) {
  switch (kind) {
  case BackendKind::Sim:
    return "sim";
  case BackendKind::Threads:
    return "threads";
  case BackendKind::Mpi:
    return "mpi";
  }
  return "?";
}

std::optional<BackendKind> shardc::parseBackendKind(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<BackendKind>>(name)
      .Case("sim", BackendKind::Sim)
      .Case("threads", BackendKind::Threads)
      .Case("mpi", BackendKind::Mpi)
      .Default(std::nullopt);
}

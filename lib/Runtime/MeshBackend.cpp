//===- MeshBackend.cpp - the backend interface's out-of-line parts --------===//
//
// Placeholder from the `threads` branch so that a backend links: the lead's
// version of this file (with the `sim` backend alongside) replaces it.
//
//===----------------------------------------------------------------------===//

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
  return "unknown";
}

std::optional<BackendKind> shardc::parseBackendKind(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<BackendKind>>(name)
      .Case("sim", BackendKind::Sim)
      .Case("threads", BackendKind::Threads)
      .Case("mpi", BackendKind::Mpi)
      .Default(std::nullopt);
}

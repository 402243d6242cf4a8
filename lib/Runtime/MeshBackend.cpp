//===- MeshBackend.cpp - the parts every backend shares -------------------===//

#include "shardc/Runtime/MeshBackend.h"

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
  for (BackendKind kind :
       {BackendKind::Sim, BackendKind::Threads, BackendKind::Mpi})
    if (name == stringifyBackendKind(kind))
      return kind;
  return std::nullopt;
}

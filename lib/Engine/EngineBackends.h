//===- EngineBackends.h - the backend an engine runs on ---------*- C++ -*-===//

#ifndef SHARDC_LIB_ENGINE_ENGINEBACKENDS_H
#define SHARDC_LIB_ENGINE_ENGINEBACKENDS_H

#include "shardc/Engine/ShardedEngine.h"

namespace shardc {

/// The backend `options.backend` names, over `mesh`.
mlir::FailureOr<std::unique_ptr<MeshBackend>>
createEngineBackend(MeshOp mesh, const EngineOptions &options);

} // namespace shardc

#endif // SHARDC_LIB_ENGINE_ENGINEBACKENDS_H

//===- ImportedVariants.h - a graph's variants, imported once ---*- C++ -*-===//
//
// The whole-plan search builds several programs from one variant of the
// model (GraphVariant.h): ZeRO and sequence parallelism make up to four
// partitioned programs of the model at one mesh and micro-batch. Writing
// the variant's JSON and importing it cost more than copying the imported
// module, so each variant is imported once and copied for every program.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DRIVER_IMPORTEDVARIANTS_H
#define SHARDC_DRIVER_IMPORTEDVARIANTS_H

#include "shardc/Driver/GraphVariant.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <map>
#include <mutex>
#include <tuple>

namespace shardc {

/// Imported variants of one graph, by the arguments of GraphVariant::variant.
/// Safe to use from several threads at once.
class ImportedVariants {
public:
  ImportedVariants(const GraphVariant &graph, mlir::MLIRContext *ctx)
      : graph(graph), ctx(ctx) {}

  /// `graph.variant(batch, keptLayers, axes, shardings)` imported (null
  /// after a diagnostic): the first call with these arguments imports it,
  /// later ones copy that module. `shardings` is told apart by its
  /// address, so clear() must be called before the layouts it points to
  /// change.
  mlir::OwningOpRef<mlir::ModuleOp>
  get(int64_t batch, int64_t keptLayers,
      const std::vector<std::pair<std::string, int64_t>> &axes,
      const GraphVariant::InputShardings *shardings);

  /// Forgets every imported module.
  void clear();

  size_t size() const;

private:
  using Key =
      std::tuple<int64_t, int64_t, std::vector<std::pair<std::string, int64_t>>,
                 const GraphVariant::InputShardings *>;
  const GraphVariant &graph;
  mlir::MLIRContext *ctx;
  std::map<Key, mlir::OwningOpRef<mlir::ModuleOp>> imported;
  mutable std::mutex mutex;
};

} // namespace shardc

#endif // SHARDC_DRIVER_IMPORTEDVARIANTS_H

//===- ImportedVariants.cpp - a graph's variants, imported once -----------===//

#include "shardc/Driver/ImportedVariants.h"

#include "shardc/Import/JsonImporter.h"

using namespace mlir;
using namespace shardc;

OwningOpRef<ModuleOp>
ImportedVariants::get(int64_t batch, int64_t keptLayers,
                      const std::vector<std::pair<std::string, int64_t>> &axes,
                      const GraphVariant::InputShardings *shardings) {
  Key key{batch, keptLayers, axes, shardings};
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = imported.find(key);
    // The kept modules are only read (copied), never changed.
    if (it != imported.end())
      return it->second->clone();
  }
  // Imported outside the lock: two threads may import the same variant
  // at once, and the first to finish keeps its module (they are equal).
  OwningOpRef<ModuleOp> module =
      importJsonGraph(graph.variant(batch, keptLayers, axes, shardings),
                      "<whole-plan candidate>", ctx);
  if (!module)
    return module;
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, inserted] = imported.try_emplace(std::move(key));
  if (inserted)
    it->second = module->clone();
  return module;
}

void ImportedVariants::clear() {
  std::lock_guard<std::mutex> lock(mutex);
  imported.clear();
}

size_t ImportedVariants::size() const {
  std::lock_guard<std::mutex> lock(mutex);
  return imported.size();
}

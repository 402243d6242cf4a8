//===- JsonGraphSchema.h - the JSON graph format's schema, from the ops ---===//
//
// The JSON Schema of the graph format and the format's vocabulary, written
// from the op registry and each op's OpFieldsOpInterface through the same
// description of an entry's fields the importer accepts, so neither lists
// an op and a new op appears in both without an edit.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_IMPORT_JSONGRAPHSCHEMA_H
#define SHARDC_IMPORT_JSONGRAPHSCHEMA_H

#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace shardc {

/// Writes the JSON Schema (draft 2020-12) of the graph format: the
/// graph's own fields, and for every op a graph entry may name, its inputs
/// and the fields the importer accepts, typed by their attribute kinds.
/// Loads the shardc dialect into `ctx`.
void writeJsonGraphSchema(mlir::MLIRContext &ctx, llvm::raw_ostream &os);

/// The words of the graph format: every op a graph entry may name and
/// every field key an entry may have, sorted, without duplicates.
std::vector<std::string> jsonGraphVocabulary(mlir::MLIRContext &ctx);

} // namespace shardc

#endif // SHARDC_IMPORT_JSONGRAPHSCHEMA_H

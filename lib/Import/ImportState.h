//===- ImportState.h - shared state of the JSON graph importer --*- C++ -*-===//
//
// The importer reads the document through `JVal`, a JSON value that knows
// where it came from (its byte offset, hence a FileLineColLoc) and how to
// name itself (a path such as `ops[2] (output "h").dims`). The path is only
// spelled out when a message needs it: a JVal holds the document node, from
// which the path is found by walking up the tree. Every reader below checks
// the JSON type before reading a value.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_LIB_IMPORT_IMPORTSTATE_H
#define SHARDC_LIB_IMPORT_IMPORTSTATE_H

#include "JsonText.h"

#include "shardc/Dialect/OpFields.h"
#include "shardc/Dialect/ShardcDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <deque>

namespace shardc::jsonimport {

/// The graph's mesh, as the readers need it.
struct MeshInfo {
  std::string name;
  mlir::FlatSymbolRefAttr ref;
  llvm::SmallVector<std::string> axes;
  llvm::SmallVector<int64_t> sizes;
  MeshOp op;

  /// Size of `axis`, or -1 if the mesh has no such axis.
  int64_t axisSize(llvm::StringRef axis) const;
  /// `["y", "x"]`, for messages.
  std::string axisList() const;
};

/// A checked entry named in messages by its plain path followed by
/// ` (label "name")`, e.g. `ops[2] (output "h")`: what a user searches the
/// file for.
struct EntryName {
  /// The entry's node, and how the path up to it is named.
  int node;
  const EntryName *outer;
  llvm::StringRef label;
  std::string name;
};

/// How a present value is named: its node, below the innermost renamed
/// entry around it (if any).
struct ValueName {
  int node = JsonDocument::kNone;
  const EntryName *entry = nullptr;
};

/// An op a graph entry may name, and the JSON fields its ODS definition
/// gives it besides op/inputs/output/sharding/partial.
struct GraphOpSpec {
  mlir::RegisteredOperationName name;
  OpFields fields;
  ResultTypeSource resultType;
  /// Every field an entry may have, and those it must have.
  llvm::SmallVector<std::string> allowed, required;
};

class ImportState {
public:
  ImportState(mlir::MLIRContext *ctx, llvm::StringRef filename,
              llvm::StringRef text, const JsonDocument &document);

  /// The location of byte `offset` of the file. Remembers `name` for it, if
  /// given, so that diagnostics MLIR itself emits there (the verifier's) can
  /// be prefixed with the entry they are about.
  mlir::FileLineColLoc locAt(size_t offset,
                             std::optional<ValueName> name = std::nullopt);
  /// The path recorded for `loc` (or the file location inside it), or "".
  std::string pathOf(mlir::Location loc) const;
  /// The path of a present value, e.g. `ops[2] (output "h").inputs[0]`.
  std::string path(ValueName name) const;
  /// A new name for the entry at `name.node`.
  const EntryName *nameEntry(ValueName name, llvm::StringRef label,
                             llvm::StringRef entryName);

  mlir::MLIRContext *ctx;
  mlir::StringAttr filename;
  const JsonDocument &document;
  LineTable lines;
  mlir::OpBuilder builder;
  MeshInfo mesh;
  /// The program is partitioned: shapes are per device.
  bool spmd = false;
  /// The shardc attribute names set on every value, uniqued once per import
  /// instead of once per value.
  mlir::StringAttr nameAttrName, shardingAttrName, paramAttrName;
  /// What an entry of each op kind may hold, worked out from the op's
  /// definition once per import (keyed by the "op" string; empty for a
  /// string that names no op).
  llvm::StringMap<std::optional<GraphOpSpec>> opSpecs;

private:
  /// Keyed on the file location; the last name given for it wins (entries
  /// are named more precisely once their structure has been checked).
  llvm::DenseMap<mlir::Location, ValueName> names;
  /// Stable addresses: JVals and `names` point into it.
  std::deque<EntryName> entryNames;
};

/// The innermost FileLineColLoc of `loc`, or null.
mlir::FileLineColLoc findFileLoc(mlir::Location loc);

/// A JSON value, where it is, and how to name it. A missing member (or
/// element) is a JVal that is not `present()`, located at the deepest value
/// on its path that exists.
class JVal {
public:
  static JVal root(ImportState &state);

  bool present() const { return missing.empty(); }
  /// The value; a missing member reads as null, so that a reader reached
  /// without a presence check reports a type error instead of misreading.
  const JsonNode &get() const;
  const JsonNode *operator->() const { return &get(); }
  /// The path, for messages (built on each call).
  std::string path() const;
  ImportState &state() const { return *st; }

  mlir::FileLineColLoc loc() const;
  /// Where the member's key is written (its value's location otherwise).
  mlir::FileLineColLoc keyLoc() const;
  /// An error at this value, its message starting with the path.
  mlir::InFlightDiagnostic error() const;

  /// Member `key` (null JVal if absent or if this is not an object).
  JVal field(llvm::StringRef key) const;
  /// Element `index` of a list (the caller checks the bounds).
  JVal at(size_t index) const;
  /// The same value, named `<path> (label "entryName")` in messages from
  /// now on, as are the values inside it.
  JVal renamed(llvm::StringRef label, llvm::StringRef entryName) const;

private:
  JVal(ImportState &state, ValueName name) : st(&state), name(name) {}
  /// Values nested deeper than this are reported at their enclosing value
  /// at this depth (the elements of a large constant at its entry; a list
  /// of axes at its dim's entry).
  static constexpr unsigned kLocatedDepth = 4;
  /// The value has its own location (it exists and is not too deep).
  bool ownsLocation() const;
  size_t offset() const;

  ImportState *st;
  /// The value or, if it is missing, the deepest value on its path that
  /// exists.
  ValueName name;
  /// For a missing value, the rest of its path (".partial", "[2]").
  std::string missing;
};

//===----------------------------------------------------------------------===//
// Typed readers (JsonFields.cpp). Each one reports its own error.
//===----------------------------------------------------------------------===//

/// `type` as printed in IR, for messages (streaming a Type into a
/// diagnostic would quote it).
std::string typeStr(mlir::Type type);

/// What a JSON value is, for messages: `the string "abc"`, `a list`, ...
std::string describe(const JsonNode &json);
/// A number as JSON writes it, for messages.
std::string numberText(const JsonNode &json);

/// ` (did you mean "x"?)` when one of `candidates` is close to `word`.
std::string suggest(llvm::StringRef word,
                    llvm::ArrayRef<llvm::StringRef> candidates);

/// Checks that `obj` is an object whose fields are all in `allowed` and
/// include every one of `required`. Unknown fields are errors so that a
/// typo ("shardng") does not silently drop information.
mlir::LogicalResult checkFields(const JVal &obj,
                                llvm::ArrayRef<llvm::StringRef> allowed,
                                llvm::ArrayRef<llvm::StringRef> required);

mlir::FailureOr<std::string> readString(const JVal &v);
/// A non-empty string.
mlir::FailureOr<std::string> readName(const JVal &v);
mlir::FailureOr<bool> readBool(const JVal &v);
mlir::FailureOr<int64_t> readInt(const JVal &v);
mlir::FailureOr<llvm::SmallVector<int64_t>> readIntList(const JVal &v);
/// A list of non-empty strings.
mlir::FailureOr<llvm::SmallVector<std::string>> readNameList(const JVal &v);
/// A list of non-negative sizes whose product fits in int64.
mlir::FailureOr<llvm::SmallVector<int64_t>> readShape(const JVal &v);
/// "f32" (also when absent), "f16", "bf16" or "f64".
mlir::FailureOr<mlir::Type> readDtype(const JVal &v);
/// Fails if the element count of `shape` overflows int64.
mlir::LogicalResult checkElementCount(const JVal &at,
                                      llvm::ArrayRef<int64_t> shape,
                                      llvm::StringRef what);

/// Reads an optional sharding (PartitionSpec list) and its optional partial
/// axes. Returns a null attribute when both are absent.
mlir::FailureOr<ShardingAttr> readSharding(const JVal &sharding,
                                           const JVal &partial);
/// Checks `sharding` against the type of the value it annotates (rank,
/// divisibility of global shapes), reporting at `at`.
mlir::LogicalResult checkShardingFits(const JVal &at, ShardingAttr sharding,
                                      mlir::Type type,
                                      llvm::StringRef valueDesc);
/// A non-empty list of distinct axes of the mesh (a collective's group).
mlir::FailureOr<llvm::SmallVector<std::string>> readMeshAxes(const JVal &v);

//===----------------------------------------------------------------------===//
// Ops (JsonOpBuilders.cpp).
//===----------------------------------------------------------------------===//

/// An op entry that passed the structural checks; its operands are known by
/// name only, so that the graph can be sorted before anything is built.
struct OpEntry {
  JVal entry;
  std::string mnemonic;
  std::string output;
  llvm::SmallVector<std::string> inputs;
  /// Where each input name is written.
  llvm::SmallVector<JVal> inputEntries;
  /// The op the entry names, and its ODS fields.
  std::optional<mlir::RegisteredOperationName> name;
  OpFields fields;
  ResultTypeSource resultType = ResultTypeSource::GivenShape;
};

/// Every op a graph may name (the registered shardc ops with one result),
/// for messages.
llvm::SmallVector<llvm::StringRef> opMnemonics(mlir::MLIRContext *ctx);

/// The registered shardc op a graph entry may name: one with a single
/// result and an OpFields description (the mesh is the graph's own field).
std::optional<mlir::RegisteredOperationName>
lookupGraphOp(mlir::MLIRContext *ctx, llvm::StringRef mnemonic);

/// What the JSON value of an op entry's field holds.
enum class GraphFieldValue {
  /// An ODS attribute, read by the codec of its OpFieldKind.
  Attribute,
  /// The partial axes that go with a sharding field.
  PartialAxes,
  /// The result's (or a constant's) shape.
  Shape,
  /// The result's (or a constant's) element type.
  Dtype,
  /// A constant's splat value.
  Number,
  /// A constant's values, row-major.
  Numbers,
  /// The size a collective keeps of the dim it concatenates.
  Size,
};

/// One JSON field of an op entry besides op/inputs/output/sharding/partial/
/// stage.
struct GraphField {
  std::string key;
  GraphFieldValue value;
  /// The attribute's kind, for GraphFieldValue::Attribute.
  OpFieldKind kind;
  bool required;
};

/// The JSON fields an entry of op `name` has, in ODS order: its ODS
/// attributes (OpFields) and what its result type needs written. The
/// importer accepts exactly these; the JSON schema is written from them.
llvm::SmallVector<GraphField> graphOpFields(mlir::OperationName name,
                                            const OpFields &fields);

/// Checks kind, fields, arity, input and output names of an op entry.
mlir::FailureOr<OpEntry> readOpEntry(const JVal &entry);

/// Builds `op` at the builder's insertion point with its result type
/// inferred from `operands`, attaches its sharding, and verifies it.
mlir::FailureOr<mlir::Operation *>
buildOp(const OpEntry &op, llvm::ArrayRef<mlir::Value> operands);

/// Builds a collective entry (JsonCollectives.cpp) from its attributes as
/// read from its fields, computing its result shape from the mesh axis
/// sizes.
mlir::FailureOr<mlir::Operation *>
buildCollective(const OpEntry &op, mlir::Value input,
                const mlir::NamedAttrList &attrs, mlir::Location loc);

/// True for the collectives whose entry may give `"size"`: the true size of
/// the dim they concatenate, dropping an uneven dim's padding.
bool collectiveTakesSize(llvm::StringRef mnemonic);

//===----------------------------------------------------------------------===//
// Attribute codecs (JsonFieldCodecs.cpp).
//===----------------------------------------------------------------------===//

/// What a field gives: the attribute (null for an absent optional field)
/// and, for a constant's value, the result type.
struct FieldValue {
  mlir::Attribute attr;
  mlir::Type type;
};

/// Reads the JSON field(s) of attribute `field` of entry `op` with the codec
/// of its kind.
mlir::FailureOr<FieldValue> readField(const OpEntry &op, const OpField &field);

/// The optional "reduction" field; null when absent (the op's default).
mlir::FailureOr<ReductionKindAttr> readReduction(const JVal &v);

/// The key of the partial axes that go with sharding field `shardingKey`:
/// "sharding" -> "partial", "result_sharding" -> "result_partial".
std::string partialKeyFor(llvm::StringRef shardingKey);

/// The op has an attribute named "sharding" (sharding_constraint): the
/// annotation of its result is then written "result_sharding".
bool hasOwnShardingField(const OpFields &fields);

/// Runs `fn` and re-emits the diagnostics it produced at the JSON entry they
/// concern, prefixed with its path: MLIR's verifiers and type inference
/// report at an op's location, which is a NameLoc around the entry's file
/// location. Diagnostics without a file location go to `fallback`; `note`,
/// if given, is called to write a note attached to every error (only then:
/// `fn` runs for every entry and nearly always succeeds).
mlir::LogicalResult
reportAtEntries(ImportState &state, mlir::FileLineColLoc fallback,
                llvm::function_ref<mlir::LogicalResult()> fn,
                llvm::function_ref<std::string()> note = nullptr);

} // namespace shardc::jsonimport

#endif // SHARDC_LIB_IMPORT_IMPORTSTATE_H

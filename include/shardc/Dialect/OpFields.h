//===- OpFields.h - an op's operands and attributes, from ODS ---*- C++ -*-===//
//
// The description OpFieldsOpInterface returns: computed by TableGen from an
// op's `arguments` (see OpFieldsInterface.td), read by the JSON graph
// importer and exporter, which hold one codec per attribute kind and none
// per op. An attribute whose storage type has no kind here does not
// compile, so a new op cannot have an attribute that a serialization
// silently drops.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECT_OPFIELDS_H
#define SHARDC_DIALECT_OPFIELDS_H

#include "shardc/Dialect/ShardcAttrs.h"

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace shardc {

/// How an attribute is stored, which decides how it is serialized.
enum class OpFieldKind {
  /// `DenseI64ArrayAttr`: a list of integers (dims, a permutation).
  IntList,
  /// `ArrayAttr` of `StringAttr`: a list of names (mesh axes).
  NameList,
  /// An `ArrayAttr` of anything else: a list of integer lists (pairs).
  IntListList,
  /// `IntegerAttr`: one integer.
  Int,
  /// `FloatAttr` (f32): one number (an epsilon).
  Float,
  /// `StringAttr`: one string (a symbol's name).
  String,
  /// `ReductionKindAttr`: "sum" or "max".
  Reduction,
  /// `ElementsAttr`: a constant's value, with its shape and element type.
  Elements,
  /// `ShardingAttr`: a PartitionSpec and its partial axes.
  Sharding,
  /// `FlatSymbolRefAttr`: the mesh, which a graph holds only one of.
  MeshRef,
  /// `TypeAttr`: an element type, spelled as a dtype ("f32", "i1", "i32",
  /// "i64").
  ElementType,
};

/// The kind of an attribute stored as `Storage` (`Element` is the element
/// storage type of a typed array attribute, `void` otherwise). There is no
/// generic definition: a storage type without a specialization below stops
/// the build at the op that uses it.
template <typename Storage, typename Element> struct OpFieldKindOf {
  static_assert(sizeof(Storage) == 0,
                "an ODS attribute of this storage type has no serialization: "
                "add an OpFieldKind and its codec in lib/Import, lib/Export");
};
template <> struct OpFieldKindOf<mlir::DenseI64ArrayAttr, void> {
  static constexpr OpFieldKind value = OpFieldKind::IntList;
};
template <> struct OpFieldKindOf<mlir::ArrayAttr, mlir::StringAttr> {
  static constexpr OpFieldKind value = OpFieldKind::NameList;
};
template <> struct OpFieldKindOf<mlir::ArrayAttr, void> {
  static constexpr OpFieldKind value = OpFieldKind::IntListList;
};
template <> struct OpFieldKindOf<mlir::IntegerAttr, void> {
  static constexpr OpFieldKind value = OpFieldKind::Int;
};
template <> struct OpFieldKindOf<mlir::FloatAttr, void> {
  static constexpr OpFieldKind value = OpFieldKind::Float;
};
template <> struct OpFieldKindOf<mlir::StringAttr, void> {
  static constexpr OpFieldKind value = OpFieldKind::String;
};
template <> struct OpFieldKindOf<ReductionKindAttr, void> {
  static constexpr OpFieldKind value = OpFieldKind::Reduction;
};
template <> struct OpFieldKindOf<mlir::ElementsAttr, void> {
  static constexpr OpFieldKind value = OpFieldKind::Elements;
};
template <> struct OpFieldKindOf<ShardingAttr, void> {
  static constexpr OpFieldKind value = OpFieldKind::Sharding;
};
template <> struct OpFieldKindOf<mlir::FlatSymbolRefAttr, void> {
  static constexpr OpFieldKind value = OpFieldKind::MeshRef;
};
template <> struct OpFieldKindOf<mlir::TypeAttr, void> {
  static constexpr OpFieldKind value = OpFieldKind::ElementType;
};

/// One ODS attribute of an op.
struct OpField {
  /// The ODS name, which is also the serialized field's name.
  llvm::StringLiteral name = "";
  OpFieldKind kind = OpFieldKind::Int;
  /// Neither optional nor default-valued.
  bool required = false;
  /// Builds the ODS default value, for a default-valued attribute.
  mlir::Attribute (*defaultValue)(mlir::MLIRContext *) = nullptr;
};

/// An op's operands (how many) and attributes (in ODS order).
struct OpFields {
  /// The operand count; with `variadicOperands`, the least one.
  unsigned numOperands = 0;
  llvm::ArrayRef<OpField> attrs;
  /// The op's single operand is `Variadic` (concatenate): it takes
  /// `numOperands` or more.
  bool variadicOperands = false;

  bool acceptsOperandCount(size_t n) const {
    return variadicOperands ? n >= numOperands : n == numOperands;
  }
};

/// Where the type of an op's (single) result comes from, decided by the
/// op's traits and interfaces: what a serialization that leaves result
/// types out must write to get it back.
enum class ResultTypeSource {
  /// The op names a mesh and its result depends on the mesh's axis sizes
  /// (a collective): computed from the mesh.
  FromMesh,
  /// It is the first operand's (SameOperandsAndResultType).
  SameAsOperand,
  /// It is the type of the op's `Elements` attribute (a constant).
  FromValue,
  /// The op infers it (InferTypeOpInterface).
  Inferred,
  /// Nothing determines it: its shape is written out (reshape, broadcast),
  /// with the first operand's element type, or, for an op without operands
  /// (iota), the written dtype.
  GivenShape,
};

} // namespace shardc

#include "shardc/Dialect/OpFieldsInterface.h.inc"

namespace shardc {
/// The fields of a registered shardc op, or nullopt for any other op.
std::optional<OpFields> getOpFields(mlir::OperationName name);
/// See ResultTypeSource; `fields` are `name`'s.
ResultTypeSource getResultTypeSource(mlir::OperationName name,
                                     const OpFields &fields);
} // namespace shardc

#endif // SHARDC_DIALECT_OPFIELDS_H

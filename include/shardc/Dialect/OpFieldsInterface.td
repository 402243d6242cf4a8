//===- OpFieldsInterface.td - an op's fields from ODS ------*- tablegen -*-===//
//
// What a serialization (the JSON graph importer and exporter) needs to know
// about an op, computed by TableGen from the op's `arguments` dag in the
// `Shardc_Op` base class, so that no hand-written table can drift from ODS.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECT_OPFIELDSINTERFACE_TD
#define SHARDC_DIALECT_OPFIELDSINTERFACE_TD

include "mlir/IR/OpBase.td"

def Shardc_OpFieldsOpInterface : OpInterface<"OpFieldsOpInterface"> {
  let cppNamespace = "::shardc";
  let description = [{
    Every shardc op has it: the number of its operands and, for each of its
    ODS attributes in declaration order, the attribute's name, its kind
    (which codec reads and writes it) and whether it is required. Nothing is
    written by hand: `Shardc_Op` computes the answer from the op's
    `arguments`, and an attribute whose storage type has no codec is a
    compile-time error (`shardc::OpFieldKindOf`). For

    ```mlir
    %s = shardc.reduce_sum %x dims = [1] : (tensor<16x64xf32>) -> tensor<16xf32>
    ```

    it is one operand and the required field `dims` of kind `IntList`.
    `RegisteredOperationName::getAttributeNames()` gives the names alone;
    kinds and optionality only exist in ODS, hence this interface.

    Constraints: none (the answer is a constant of the op class).
  }];
  let methods = [
    StaticInterfaceMethod<[{
        The op's operand count and its ODS attributes, in declaration order.
      }],
      "::shardc::OpFields", "getOpFields", (ins)>
  ];
}

// The table entry of argument `index` of `args`: empty for an operand, an
// `::shardc::OpField` initializer for an attribute.
class Shardc_OpFieldEntry<dag args, int index> {
  Attr attr = !getdagarg<Attr>(args, index);
  // OptionalAttr<X> keeps X's storage type; a typed array names its
  // elements' storage type too, so that a string list and a list of pairs
  // are different kinds although both are stored as an ArrayAttr.
  Attr base = !if(!initialized(attr.baseAttr), attr.baseAttr, attr);
  string element = !if(!isa<TypedArrayAttrBase>(base),
                       !cast<TypedArrayAttrBase>(base).elementAttr.storageType,
                       "void");
  bit hasDefault = !initialized(attr.defaultValue);
  string defaultFn = !if(hasDefault,
      "[](::mlir::MLIRContext *ctx) -> ::mlir::Attribute { "
      "::mlir::Builder odsBuilder(ctx); return "
      # !subst("$0", attr.defaultValue,
                !subst("$_builder", "odsBuilder", attr.constBuilderCall))
      # "; }",
      "nullptr");
  string entry = "{\"" # !getdagname(args, index) # "\", "
      # "::shardc::OpFieldKindOf<" # attr.storageType # ", " # element
      # ">::value, /*required=*/"
      # !if(!or(attr.isOptional, hasDefault), "false", "true")
      # ", " # defaultFn # "},\n";
}

// The C++ body of `getOpFields` for an op with arguments `args`.
class Shardc_OpFieldsBody<dag args> {
  list<int> indices = !range(!size(args));
  int numOperands = !foldl(0, indices, n, i,
      !if(!initialized(!getdagarg<Attr>(args, i)), n, !add(n, 1)));
  // A Variadic operand counts for one (the least number it takes).
  bit variadic = !foldl(0, indices, v, i,
      !or(v, !and(!not(!initialized(!getdagarg<Attr>(args, i))),
                  !isa<Variadic>(!getdagarg<TypeConstraint>(args, i)))));
  string entries = !foldl("", indices, text, i,
      !if(!initialized(!getdagarg<Attr>(args, i)),
          text # Shardc_OpFieldEntry<args, i>.entry, text));
  code body = "  static const ::shardc::OpField kAttrs[] = {\n" # entries
      # "{}};\n  return {" # numOperands
      # ", ::llvm::ArrayRef(kAttrs).drop_back(), "
      # !if(variadic, "true", "false") # "};\n";
}

#endif // SHARDC_DIALECT_OPFIELDSINTERFACE_TD

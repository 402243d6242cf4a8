//===- ShardcDialect.td - the shardc dialect ---------------*- tablegen -*-===//

#ifndef SHARDC_DIALECT_SHARDCDIALECT_TD
#define SHARDC_DIALECT_SHARDCDIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Shardc_Dialect : Dialect {
  let name = "shardc";
  let cppNamespace = "::shardc";
  let summary = "A small tensor IR with device meshes and PartitionSpec shardings.";
  let description = [{
    The `shardc` dialect carries a device **mesh** (`shardc.mesh`), tensor
    operations over statically shaped tensors, **sharding** annotations in
    PartitionSpec form (`#shardc.sharding`), and the collective operations the
    partitioner inserts when it rewrites a global program into a per-device
    (SPMD) program.

    Shardings are attached to values in three places:

    * function arguments and results, as the argument/result attribute
      `shardc.sharding` (an argument may also carry `shardc.name`, the name
      users bind inputs by, e.g. `--inputs x=x.npy`, and the unit attribute
      `shardc.param`, marking a trainable parameter that `--shardc-autodiff`
      differentiates by default; `--shardc-training-step` gives the optimizer's state arguments
      `shardc.optimizer_state = <initial value>` (a float), and marks
      the training step's results with `shardc.gradient_of = "w0"` (the
      gradient of argument `w0`) and `shardc.next = "w0"` (the value of
      argument `w0` after the step));
    * operation results, as the discardable attribute `shardc.sharding`;
      an op may also carry `shardc.stage = k` (the pipeline stage it runs
      in) and, in a pipeline stage program, `shardc.pipeline_action =
      "F3"` (the schedule action it belongs to; docs/pipeline.md);
    * explicitly, by `shardc.sharding_constraint`.

    ```mlir
    shardc.mesh @mesh ["y"=4, "x"=2]
    func.func @main(%x: tensor<16x64xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"y"}, {"x"} ]>})
        -> (tensor<16x64xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"y"}, {"x"} ]>}) {
      %0 = shardc.relu %x : tensor<16x64xf32>
      return %0 : tensor<16x64xf32>
    }
    ```
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasConstantMaterializer = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let dependentDialects = ["::mlir::func::FuncDialect"];
  let extraClassDeclaration = [{
    /// Registers the attributes (defined next to their storage classes).
    void registerAttributes();
    /// Name of the attribute that carries a value's sharding.
    static constexpr ::llvm::StringLiteral getShardingAttrName() {
      return ::llvm::StringLiteral("shardc.sharding");
    }
    /// Name of the argument attribute that carries an input's name.
    static constexpr ::llvm::StringLiteral getNameAttrName() {
      return ::llvm::StringLiteral("shardc.name");
    }
    /// Name of the unit argument attribute marking a trainable parameter:
    /// what --shardc-autodiff differentiates by default.
    static constexpr ::llvm::StringLiteral getParamAttrName() {
      return ::llvm::StringLiteral("shardc.param");
    }
    /// Name of the module attribute listing, as strings, the float
    /// initializers an ONNX import made constants (torch's buffers, found or
    /// named with --buffers): checkpoint loaders skip their entries, which a
    /// torch state_dict holds (docs/onnx.md#buffers).
    static constexpr ::llvm::StringLiteral getBuffersAttrName() {
      return ::llvm::StringLiteral("shardc.buffers");
    }
    /// Name of the array<i64> argument attribute giving the shape a
    /// checkpoint stores a parameter in when the model computes on a view of
    /// it (the same row-major elements): the ONNX importer stacks a fused
    /// projection [3*E, E] as [3, E, E] (docs/onnx.md). Checkpoints are read
    /// and written in this shape.
    static constexpr ::llvm::StringLiteral getCheckpointShapeAttrName() {
      return ::llvm::StringLiteral("shardc.checkpoint_shape");
    }
    /// Name of the argument attribute marking optimizer state (Adam's
    /// moments), a float: the state's initial value (every element). What
    /// ZeRO shards and the memory reports count as such.
    static constexpr ::llvm::StringLiteral getOptimizerStateAttrName() {
      return ::llvm::StringLiteral("shardc.optimizer_state");
    }
    /// Name of the string result attribute naming the argument whose
    /// gradient the result is.
    static constexpr ::llvm::StringLiteral getGradientOfAttrName() {
      return ::llvm::StringLiteral("shardc.gradient_of");
    }
    /// Name of the string result attribute naming the argument (a parameter
    /// or optimizer state) whose value after a training step the result is.
    static constexpr ::llvm::StringLiteral getNextAttrName() {
      return ::llvm::StringLiteral("shardc.next");
    }
    /// Name of the unit attribute marking a partitioned (per-device) function.
    static constexpr ::llvm::StringLiteral getSpmdAttrName() {
      return ::llvm::StringLiteral("shardc.spmd");
    }
    /// Name of the integer attribute giving the pipeline stage an op runs
    /// in (`"stage": k` in JSON), or, on a function, the stage whose
    /// program it is (docs/pipeline.md).
    static constexpr ::llvm::StringLiteral getStageAttrName() {
      return ::llvm::StringLiteral("shardc.stage");
    }
    /// Name of the string attribute saying which action of a pipeline
    /// schedule ("F3": forward of micro-batch 3, "B3": its backward) an op
    /// of a stage program belongs to; the simulator traces by it.
    static constexpr ::llvm::StringLiteral getPipelineActionAttrName() {
      return ::llvm::StringLiteral("shardc.pipeline_action");
    }
    /// Name of the dictionary attribute a collective gets from
    /// `--shardc-partition=explain=true`: the record of the reshard it
    /// belongs to (include/shardc/Transforms/ReshardRecord.h).
    static constexpr ::llvm::StringLiteral getReshardForAttrName() {
      return ::llvm::StringLiteral("shardc.reshard_for");
    }
  }];
}

include "mlir/IR/OpAsmInterface.td"
include "shardc/Dialect/OpFieldsInterface.td"

// Every op names its result after its source name (the JSON output name or
// the SSA name it was parsed with), so printed IR reads like the model, and
// describes its fields (OpFieldsOpInterface) from its own `arguments`, so
// that serializations need no per-op code.
class Shardc_Op<string mnemonic, list<Trait> traits = []>
    : Op<Shardc_Dialect, mnemonic, !listconcat(traits,
        [DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>,
         DeclareOpInterfaceMethods<Shardc_OpFieldsOpInterface>])> {
  // What every shardc op defines; a class that adds definitions of its own
  // sets extraClassDefinition to this followed by them.
  code shardcOpDefinition = [{
    void $cppClass::getAsmResultNames(::mlir::OpAsmSetValueNameFn setNameFn) {
      ::shardc::setResultNameFromLoc(getOperation(), setNameFn);
    }
    ::shardc::OpFields $cppClass::getOpFields() {
  }] # Shardc_OpFieldsBody<arguments>.body # [{
    }
  }];
  let extraClassDefinition = shardcOpDefinition;
}

class Shardc_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Shardc_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

// The element types of shardc tensors. Floats: only f32 is executed today;
// f16, bf16 and f64 are accepted by the IR so that mixed precision needs no
// change here. Integers: i1 (booleans: masks, comparison results), i32 and
// i64 (token ids, positions). Layout ops, constants, sharding constraints
// and collectives take any of them; arithmetic takes floats only, except
// add, sub and mul, which also do index arithmetic on i32 and i64.
def Shardc_Float : AnyTypeOf<[F32, F16, BF16, F64]>;
def Shardc_Integer : AnyTypeOf<[I1, I32, I64]>;
// A tensor whose byte size overflows 63 bits cannot exist anywhere, so it is
// rejected when the IR is verified, not when something tries to allocate it.
def Shardc_Tensor : Type<
    And<[StaticShapeTensorOf<[F32, F16, BF16, F64, I1, I32, I64]>.predicate,
         CPred<"::shardc::hasAddressableSize($_self)">]>,
    "statically shaped tensor of f32, f16, bf16, f64, i1, i32 or i64 values "
    "whose byte size fits in 63 bits",
    "::mlir::RankedTensorType">;
// The operands and results of arithmetic (elementwise math, contractions,
// reductions): the verifier names the op and the offending type.
def Shardc_FloatTensor : Type<
    And<[StaticShapeTensorOf<[F32, F16, BF16, F64]>.predicate,
         CPred<"::shardc::hasAddressableSize($_self)">]>,
    "statically shaped tensor of floating-point (f32, f16, bf16 or f64) "
    "values whose byte size fits in 63 bits",
    "::mlir::RankedTensorType">;
// Index arithmetic (add, sub, mul) also takes the integer types that count
// (i32, i64); autodiff gives such operands no cotangent.
def Shardc_NumericTensor : Type<
    And<[StaticShapeTensorOf<[F32, F16, BF16, F64, I32, I64]>.predicate,
         CPred<"::shardc::hasAddressableSize($_self)">]>,
    "statically shaped tensor of floating-point (f32, f16, bf16 or f64) "
    "or integer (i32, i64) values whose byte size fits in 63 bits",
    "::mlir::RankedTensorType">;
// Indices: gather's and scatter_add's ids.
def Shardc_IndexTensor : Type<
    And<[StaticShapeTensorOf<[I32, I64]>.predicate,
         CPred<"::shardc::hasAddressableSize($_self)">]>,
    "statically shaped tensor of i32 or i64 indices",
    "::mlir::RankedTensorType">;
// The predicate of select and the result of compare.
def Shardc_BoolTensor : Type<
    And<[StaticShapeTensorOf<[I1]>.predicate,
         CPred<"::shardc::hasAddressableSize($_self)">]>,
    "statically shaped tensor of i1 values",
    "::mlir::RankedTensorType">;

#endif // SHARDC_DIALECT_SHARDCDIALECT_TD

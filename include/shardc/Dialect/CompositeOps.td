//===- CompositeOps.td - the composite ops -----------------*- tablegen -*-===//
//
// Included by ShardcOps.td at the place these definitions had there: it
// uses the classes and constraints defined before it.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECT_COMPOSITEOPS_TD
#define SHARDC_DIALECT_COMPOSITEOPS_TD

//===----------------------------------------------------------------------===//
// Composites: softmax, log_softmax, layer_norm, rms_norm, mean,
// cross_entropy (lib/Dialect/CompositeOps.cpp)
//===----------------------------------------------------------------------===//
// A composite names an expression over primitive ops that users write every
// day. It has a verifier, type inference and its expansion
// (DecomposableOpInterface): --shardc-decompose replaces it by the
// primitives, which carry the sharding rules, kernels and costs, so
// propagation, partitioning and the interpreter never see a composite.
// A composite whose backward pass a fused kernel would compute from fewer
// saved values than its expansion's (softmax from its output, a norm from
// its input) also has a gradient rule of its own (DifferentiableOpInterface,
// written in primitives): a training step is differentiated before the
// composites are expanded, so the backward pass reads only what the rule
// reads. Axes may be negative (counted from the end, as in PyTorch).

class Shardc_CompositeOp<string mnemonic, list<Trait> traits = []>
    : Shardc_Op<mnemonic, !listconcat(traits, [Pure,
        DeclareOpInterfaceMethods<Shardc_DecomposableOpInterface>])>;

/// A composite with a gradient rule of its own (lib/Dialect/CompositeOps.cpp).
class Shardc_DifferentiableCompositeOp<string mnemonic, list<Trait> traits = []>
    : Shardc_CompositeOp<mnemonic, !listconcat(traits, [
        DeclareOpInterfaceMethods<Shardc_DifferentiableOpInterface>])>;

def Shardc_SoftmaxOp : Shardc_DifferentiableCompositeOp<"softmax",
    [SameOperandsAndResultType]> {
  let summary = "Softmax along `axis`: exp(x - max) / sum(exp(x - max)).";
  let description = [{
    As `torch.softmax(x, dim=axis)`. Expands to
    `e = exp(x - stop_gradient(reduce_max(x)))`, `e / reduce_sum(e)` over
    `axis` (the maxima broadcast back): the shift keeps `exp` finite and,
    detached, carries no gradient (the softmax does not depend on it).

    ```mlir
    %p = shardc.softmax %scores axis = -1 : tensor<2x8x8xf32>
    ```

    Constraints: `axis` is in `[-rank, rank)`; the result has the operand's
    type.
  }];
  let arguments = (ins Shardc_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Shardc_FloatTensor:$result);
  let assemblyFormat = "$input `axis` `=` $axis attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Shardc_LogSoftmaxOp : Shardc_DifferentiableCompositeOp<"log_softmax",
    [SameOperandsAndResultType]> {
  let summary = "Log-softmax along `axis`: (x - max) - log(sum(exp(x - max))).";
  let description = [{
    As `torch.log_softmax(x, dim=axis)`. Expands to `s = x -
    stop_gradient(reduce_max(x))`, `s - log(reduce_sum(exp(s)))` over
    `axis`, which stays finite where `log(softmax(x))` would underflow.

    ```mlir
    %lp = shardc.log_softmax %logits axis = 1 : tensor<16x256xf32>
    ```

    Constraints: `axis` is in `[-rank, rank)`; the result has the operand's
    type.
  }];
  let arguments = (ins Shardc_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Shardc_FloatTensor:$result);
  let assemblyFormat = "$input `axis` `=` $axis attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Shardc_LayerNormOp : Shardc_DifferentiableCompositeOp<"layer_norm",
    [InferTypeOpAdaptor]> {
  let summary = "Layer normalization over `axes`, then the affine map gamma * . + beta.";
  let description = [{
    As `torch.nn.functional.layer_norm(x, x.shape[-k:], gamma, beta, eps)`
    when `axes` are the last `k` dims (any dims may be listed):
    `(x - mean) / sqrt(var + epsilon) * gamma + beta`, with the mean and
    the biased variance taken over `axes`. `gamma` and `beta` have the
    shape of the normalized dims (in dim order) and are broadcast over the
    others; a layer norm without the affine map passes ones and zeros.

    ```mlir
    %h = shardc.layer_norm %x, %gamma, %beta axes = [-1] epsilon = 1.0e-05 : (tensor<16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<16x64xf32>
    ```

    Constraints: `axes` is non-empty, each in `[-rank, rank)`, no dim twice;
    `gamma` and `beta` have the type `x.shape[sorted axes]`; `epsilon >= 0`;
    the result has `x`'s type (inferred).
  }];
  let arguments = (ins Shardc_FloatTensor:$input, Shardc_FloatTensor:$gamma,
                       Shardc_FloatTensor:$beta, DenseI64ArrayAttr:$axes,
                       DefaultValuedAttr<F32Attr, "1.0e-5">:$epsilon);
  let results = (outs Shardc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $gamma `,` $beta `axes` `=` $axes `epsilon` `=` $epsilon
    attr-dict `:` functional-type(operands, results)
  }];
}

def Shardc_RmsNormOp : Shardc_DifferentiableCompositeOp<"rms_norm", [InferTypeOpAdaptor]> {
  let summary = "RMS normalization over `axes`: x / sqrt(mean(x^2) + epsilon) * gamma.";
  let description = [{
    As `torch.nn.functional.rms_norm(x, x.shape[-k:], gamma, eps)` (T5,
    LLaMA) when `axes` are the last `k` dims: `x * rsqrt(mean(x * x) +
    epsilon) * gamma`, the mean over `axes`. `gamma` has the shape of the
    normalized dims and is broadcast over the others.

    ```mlir
    %h = shardc.rms_norm %x, %gamma axes = [1] epsilon = 1.0e-06 : (tensor<16x64xf32>, tensor<64xf32>) -> tensor<16x64xf32>
    ```

    Constraints: as for `layer_norm`, without `beta`.
  }];
  let arguments = (ins Shardc_FloatTensor:$input, Shardc_FloatTensor:$gamma,
                       DenseI64ArrayAttr:$axes,
                       DefaultValuedAttr<F32Attr, "1.0e-5">:$epsilon);
  let results = (outs Shardc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $gamma `axes` `=` $axes `epsilon` `=` $epsilon
    attr-dict `:` functional-type(operands, results)
  }];
}

def Shardc_MeanOp : Shardc_DifferentiableCompositeOp<"mean", [InferTypeOpAdaptor]> {
  let summary = "Arithmetic mean over the listed dimensions, dropping them.";
  let description = [{
    As `torch.mean(x, dim=dims)` (and `jnp.mean(x, axis=dims)`):
    `reduce_sum(x, dims)` divided by the number of elements summed. The
    dims are spelled as `reduce_sum`'s.

    ```mlir
    %m = shardc.mean %x dims = [0, 1] : (tensor<4x8x16xf32>) -> tensor<16xf32>
    ```

    Constraints: `dims` are in `[-rank, rank)`, no dim twice; the result
    type is inferred.
  }];
  let arguments = (ins Shardc_FloatTensor:$input, DenseI64ArrayAttr:$dims);
  let results = (outs Shardc_FloatTensor:$result);
  let assemblyFormat = "$input `dims` `=` $dims attr-dict `:` functional-type(operands, results)";
}

def Shardc_CrossEntropyOp : Shardc_CompositeOp<"cross_entropy",
    [InferTypeOpAdaptor]> {
  let summary = "Mean cross-entropy of logits [..., V] against integer class ids [...].";
  let description = [{
    As `torch.nn.functional.cross_entropy(logits.reshape(-1, V),
    labels.reshape(-1))`: the mean over every position of
    `logsumexp(logits[p, :]) - logits[p, labels[p]]`, a scalar. It expands
    into ops that keep a vocab-sharded `logits` sharded (vocab-parallel
    cross-entropy, as Megatron's): the row maximum (detached with
    `stop_gradient`) and two row sums are the only reductions over the
    vocab dim, each of the labels' size, and `logits[p, labels[p]]` is taken
    with a one-hot mask, `compare(iota, labels, "EQ")`, and `select`,
    instead of a gather. A label outside `[0, V)` selects nothing (its
    position contributes `logsumexp`); there is no `ignore_index`.

    ```mlir
    %loss = shardc.cross_entropy %logits, %targets : (tensor<2x8x256xf32>, tensor<2x8xi32>) -> tensor<f32>
    ```

    Constraints: `logits` has rank at least 1 and `labels` its shape
    without the last dim; `labels` are i32 or i64; the result is a 0-d
    tensor of `logits`' element type (inferred).
  }];
  let arguments = (ins Shardc_FloatTensor:$logits, Shardc_Tensor:$labels);
  let results = (outs Shardc_FloatTensor:$result);
  let assemblyFormat = "$logits `,` $labels attr-dict `:` functional-type(operands, results)";
}


#endif // SHARDC_DIALECT_COMPOSITEOPS_TD

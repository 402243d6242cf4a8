//===- Passes.td - shardc passes ---------------------------*- tablegen -*-===//

#ifndef SHARDC_TRANSFORMS_PASSES_TD
#define SHARDC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def ShardcDecompose : Pass<"shardc-decompose", "::mlir::ModuleOp"> {
  let summary = "Expands every composite op (softmax, layer_norm, cross_entropy, ...) into primitive ops.";
  let description = [{
    Replaces every op that implements `DecomposableOpInterface` by the
    primitive ops its `decompose` method builds (the expansion lives with
    the op, in lib/Dialect/CompositeOps.cpp; this pass names no op). It runs
    first in every pipeline (`shardc-propagate-pipeline`,
    `shardc-partition-pipeline`, `shardc-autodiff-pipeline`,
    `shardc-train-pipeline`) and before the `shardc` commands execute a
    program, so propagation, partitioning, autodiff and the interpreter see
    only primitives, whose sharding rules, gradient rules and kernels apply.

    * Names: the value replacing a composite keeps its name; the
      intermediate values are named `<name>.<part>` (`p.max`, `p.sum`,
      `p.sum_bcast`).
    * Shardings: a `shardc.sharding` on the composite's result moves to the
      value replacing it.

    Example:

    ```
    %p = shardc.softmax %x axis = 1 : tensor<4x8xf32>
    ```

    becomes

    ```
    %p.max = shardc.reduce_max %x dims = [1] : (tensor<4x8xf32>) -> tensor<4xf32>
    %p.max_detached = shardc.stop_gradient %p.max : tensor<4xf32>
    %p.max_bcast = shardc.broadcast_in_dim %p.max_detached dims = [0] : (tensor<4xf32>) -> tensor<4x8xf32>
    %p.shifted = shardc.sub %x, %p.max_bcast : tensor<4x8xf32>
    %p.exp = shardc.exp %p.shifted : tensor<4x8xf32>
    %p.sum = shardc.reduce_sum %p.exp dims = [1] : (tensor<4x8xf32>) -> tensor<4xf32>
    %p.sum_bcast = shardc.broadcast_in_dim %p.sum dims = [0] : (tensor<4xf32>) -> tensor<4x8xf32>
    %p = shardc.div %p.exp, %p.sum_bcast : tensor<4x8xf32>
    ```

    With `keep-differentiable=true`, the composites that have a gradient
    rule of their own (softmax, log_softmax, layer_norm, rms_norm, mean) are
    kept: the training pipelines run it before differentiating, so that
    autodiff applies those rules (a backward pass that reads what a fused
    kernel's reads, docs/autodiff.md), and the plain pass after it.

    Constraints: none (a program without composites is left as it is).
  }];
  let options = [
    Option<"keepDifferentiable", "keep-differentiable", "bool",
           /*default=*/"false",
           "Keep the composites that have a gradient rule of their own">,
  ];
  let dependentDialects = ["::shardc::ShardcDialect"];
}

def ShardcAutodiff : Pass<"shardc-autodiff", "::mlir::ModuleOp"> {
  let summary = "Rewrites each function into its vector-Jacobian product (reverse mode).";
  let description = [{
    Rewrites every function `@f(args...) -> (results...)` in place into

    ```
    @f(args..., <one cotangent per result>) -> (results..., <one gradient per differentiated arg>)
    ```

    an engine's `forward` followed by `backward(grads)`
    ([engine.md](engine.md)): given the cotangent `dL/dresult` of every
    result, it returns the forward results and `dL/darg` for every
    differentiated argument. It runs on the global
    (unpartitioned) program, so that `--shardc-propagate` and
    `--shardc-partition` then shard the backward pass like the forward one.

    * Differentiated arguments: those named by `wrt` (their `shardc.name`);
      without `wrt`, those marked `shardc.param`; without either, all the
      float ones.
    * Names: the cotangent of result `z` is the argument `z.grad`; the
      gradient of argument `w0` is the result `w0.grad` (so
      `shardc run --out-dir` writes `w0.grad.npy`). The op computing the
      cotangent of a named value `h` is named `h.grad`.
    * Shardings: a cotangent argument gets its result's `shardc.sharding`,
      a gradient result its argument's (without `partial`).
    * Each op's cotangents come from its gradient rule
      (`DifferentiableOpInterface`). The cotangents of a value used several
      times are added up; an argument with no path to the results gets a
      zero gradient (a constant). Only what the requested gradients need is
      built.

    Constraints: every op of the function has a gradient rule; the function
    is not partitioned (no `shardc.spmd`, no collectives); results are
    float tensors; every `wrt` name names an argument, and every
    differentiated argument is a float tensor (integer inputs, token ids or
    labels, are data: without `wrt` and `shardc.param`, "all" means all
    float arguments).

    Example (`shardc compile --autodiff`, which names values after their
    source names; `%w` is the `shardc.param` argument):

    ```mlir
    shardc.mesh @mesh ["data"=2]
    func.func @main(%x: tensor<4x8xf32> {shardc.name = "x"},
                    %w: tensor<8x2xf32> {shardc.name = "w", shardc.param})
        -> tensor<4x2xf32> {
      %y = shardc.matmul %x, %w : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
      return %y : tensor<4x2xf32>
    }
    ```

    becomes

    ```
    func.func @main(%arg0: tensor<4x8xf32> {shardc.name = "x"},
                    %arg1: tensor<8x2xf32> {shardc.name = "w", shardc.param},
                    %arg2: tensor<4x2xf32> {shardc.name = "y.grad"})
        -> (tensor<4x2xf32>, tensor<8x2xf32>) {
      %y = shardc.matmul %arg0, %arg1 : ...
      %w.grad = shardc.dot_general %arg0, %arg2 batch = [] x [], contract = [0] x [0] : ...
      return %y, %w.grad : tensor<4x2xf32>, tensor<8x2xf32>
    }
    ```
  }];
  let options = [
    ListOption<"wrt", "wrt", "std::string",
               "Names (shardc.name) of the arguments to differentiate; "
               "default: the shardc.param ones, else all">,
  ];
  let dependentDialects = ["::shardc::ShardcDialect"];
}

def ShardcTrainingStep : Pass<"shardc-training-step", "::mlir::ModuleOp"> {
  let summary = "Rewrites a loss function into one training step: gradients, then an SGD or Adam update.";
  let description = [{
    Takes a function whose first result is a scalar loss,
    `@f(inputs and params...) -> (loss, others...)`, and rewrites it in place
    into one optimizer step:

    ```
    @f(inputs and params..., learning_rate, <state>...)
        -> (loss, others..., <gradients>..., <next params>..., <next state>...)
    ```

    * The gradients of the parameters come from the autodiff core with
      `d loss = 1` (the other results do not contribute); each is a result
      `<p>.grad` with `shardc.gradient_of = "<p>"`.
    * `learning_rate` is a scalar input, so a schedule changes it per step
      without recompiling.
    * SGD: `p.next = p - learning_rate * g`. No state.
    * Adam (Kingma & Ba, bias-corrected): state `<p>.adam_m`, `<p>.adam_v`
      per parameter (start at 0) and the scalars `adam.beta1_power`,
      `adam.beta2_power` (start at 1; the step multiplies them by beta1,
      beta2, so after step t they are beta^t):
      `m = b1 m + (1-b1) g`, `v = b2 v + (1-b2) g*g`,
      `p.next = p - lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)`,
      computed in the parameters' element type.
    * Every state argument carries `shardc.optimizer_state = <its initial
      value>` (0 for the moments, 1 for the powers: the engine and
      `--seed` runs start the state there); every result
      that is a parameter's or a state's next value carries
      `shardc.next = "<its argument's name>"` and is named `<name>.next`.

    Layouts. A state argument, a gradient result and a next value get their
    parameter's sharding, so the update is elementwise on each device's
    block with no communication (the state is sharded like its parameter).
    With `zero-axes`, the state is in addition split over those mesh axes
    (each on the first dimension it divides evenly and does not split
    already), and the gradient is constrained to the state's layout
    (`shardc.sharding_constraint`): on a data-parallel program the
    partitioner then reduce-scatters the gradients instead of all-reducing
    them, updates one slice per device and all-gathers the new parameters —
    ZeRO-1/2 fall out of propagation. A parameter already split over a ZeRO
    axis (FSDP, ZeRO-3) needs nothing more.

    Run it on the global program, after `--shardc-propagate` (so that the
    parameters' shardings are known and the backward pass is laid out like
    the forward one), and propagate again before partitioning.

    Constraints: the function can be differentiated (see
    `--shardc-autodiff`); its first result is a rank-0 float tensor; it has
    at least one parameter (`params`, else the `shardc.param` arguments); no
    input or result already has one of the names the step adds; every
    `zero-axes` entry is an axis of the function's mesh.

    Example: `shardc compile examples/mlp_train.json --train-step=sgd`
    (after propagation) gives

    ```
    func.func @main(%x: ..., %y: ..., %w0: ... {shardc.param}, %w1: ...,
                    %learning_rate: tensor<f32>)
        -> (tensor<f32>, <w0.grad>, <w1.grad>, <w0.next>, <w1.next>) {
      ...
      %w0.next = shardc.sub %w0, %8 : tensor<16x64xf32>
    ```
  }];
  let options = [
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"adam\"",
           "sgd or adam">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9",
           "Adam's first-moment decay">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999",
           "Adam's second-moment decay">,
    Option<"epsilon", "epsilon", "double", /*default=*/"1e-8",
           "Adam's epsilon">,
    ListOption<"params", "params", "std::string",
               "Names of the parameters; default: the shardc.param inputs">,
    ListOption<"zeroAxes", "zero-axes", "std::string",
               "Mesh axes to split the optimizer state over (ZeRO-1/2)">,
    Option<"precision", "precision", "std::string", /*default=*/"\"f32\"",
           "f32, bf16-mixed or f16-mixed (docs/precision.md)">,
    Option<"recompute", "recompute", "std::string", /*default=*/"\"none\"",
           "none, selective or full: the train pipeline runs "
           "--shardc-recompute with it once the step is sharded "
           "(docs/recompute.md)">,
    Option<"layerInputs", "layer-inputs", "std::string",
           /*default=*/"\"^x0$|_res2$\"",
           "For recompute=full: the regex naming each layer's input">,
  ];
  let dependentDialects = ["::shardc::ShardcDialect"];
}

def ShardcRecompute : Pass<"shardc-recompute", "::mlir::func::FuncOp"> {
  let summary = "Activation recomputation: the backward pass recomputes forward values instead of keeping them.";
  let description = [{
    Rewrites a training step (a function whose first result is the loss and
    some of whose results carry `shardc.gradient_of`, as `--shardc-training-step`
    makes it; global or partitioned) so that the backward pass reads copies
    of forward values it recomputes, rather than the forward values
    themselves (docs/recompute.md). The forward values then die at their
    last forward use, and the copies live only while their layer's backward
    pass runs: peak memory goes down, FLOPs go up by the forward FLOPs
    copied. The copies are the same ops on the same operands, in the same
    order, so the step's results are bit-identical to the step without
    recompute. Each copy carries `shardc.recomputed`.

    The forward pass is the loss's backward slice; values computed from
    constants alone (masks) are never copied.

    * `mode=full` (Megatron-LM's full recompute): the layers are the spans
      of the forward pass between consecutive *layer inputs*, the forward
      values whose names match `layer-inputs` (default `^x0$|_res2$`, the
      residual stream `examples/gpt/gpt_graph.py` names `x0` entering the
      first block and `h<l>_res2` leaving block l). Only the layer inputs
      are kept; the forward ops of a layer whose values the backward pass
      reads are copied just before the first backward op reading one of
      them (its layer's backward pass). Tensor-parallel collectives of the
      layer run again, as in Megatron-LM. The embedding before the first
      layer input and the head after the last are not recomputed. A
      pattern matching no forward value is an error.
    * `mode=selective` (Korthikanti et al. 2022): the attention core is
      recomputed. It starts at an op making a value of rank 4 or more whose
      two last dims are equal (the `[batch, heads, seq, seq]` scores of
      Q K^T: a size that grows with the square of the sequence) from other
      values, and goes on through the ops computed from core values, their
      row statistics (softmax's max and sum) and constants alone; an op
      mixing a core value with another activation (the contraction with V)
      ends it. Each connected chain (one per attention block) is copied,
      from Q and K, before its first backward reader. (Q and K laid out
      `[batch, heads, seq, head_dim]` with a head dim equal to the sequence
      are `[.., s, s]` too; they are then recomputed as well, still exact.)
    * `mode=none`: nothing changes.

    The train pipeline (`shardc compile --train-step`, `train`,
    `simulate --train-step`, `estimate`) runs this pass last, after
    partitioning and cleanup, whose common-subexpression elimination would
    merge each copy back into its original.

    Example: `shardc compile examples/gpt_tiny.json --train-step=sgd
    --partition --recompute=full` gives a step whose backward pass starts
    each block with copies such as

    ```
    %h1_ln1.mean_sum_5 = shardc.reduce_sum %h0_res2 dims = [2] {shardc.recomputed, ...}
    ```
  }];
  let options = [
    Option<"mode", "mode", "std::string", /*default=*/"\"none\"",
           "none, selective or full">,
    Option<"layerInputs", "layer-inputs", "std::string",
           /*default=*/"\"^x0$|_res2$\"",
           "For full: the regex naming each layer's input">,
  ];
  let dependentDialects = ["::shardc::ShardcDialect"];
}

def ShardcPipelineSplit : Pass<"shardc-pipeline-split", "::mlir::ModuleOp"> {
  let summary = "Splits a loss function into one training-step program per pipeline stage.";
  let description = [{
    Pipeline parallelism as a transformation of the module (docs/pipeline.md):
    the module's entry function, whose first result is a scalar loss summed
    over the batch's samples and whose `shardc.param` arguments are trained,
    is cut into as many stages as the pipeline axis of its mesh has devices
    (at the ops' `shardc.stage`, or balanced by FLOPs), and one function
    `@pipeline_stage<k>` per stage is added after it. Stage k's program runs
    the forward and backward of every micro-batch in the schedule's order,
    receiving activations from stage k-1 and cotangents from stage k+1
    (`shardc.recv`, `shardc.send`, each marked with its action,
    `shardc.pipeline_action = "F0"`, `"B0"`, ...), sums its parameters'
    gradients over the micro-batches, and ends with one SGD or Adam update
    of its parameters. The loss function is left as it was, the reference
    a pipelined run is checked against. It is the transformation `shardc
    pipeline` runs before it executes the stages on a backend; this pass
    gives it to `shardc-opt` and pass pipelines.

    Constraints, each a diagnostic at the function or the mesh: the loss
    function has one block and is not partitioned yet; composite ops are
    decomposed first (`--shardc-decompose`); `axis` is an axis of the
    function's mesh; every non-parameter input splits into `microbatches`
    along dim 0; the schedule is `gpipe` or `1f1b` (`interleaved` is priced
    by `shardc estimate` only); the optimizer is `sgd` or `adam`.

    ```mlir
    shardc.mesh @mesh ["pipe"=2]
    func.func @main(%x: tensor<8x4xf32> {shardc.name = "x"},
                    %w0: tensor<4x4xf32> {shardc.name = "w0", shardc.param},
                    %w1: tensor<4x4xf32> {shardc.name = "w1", shardc.param})
        -> tensor<f32> {
      %h = shardc.matmul %x, %w0 : (tensor<8x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
      %a = shardc.tanh %h : tensor<8x4xf32>
      %y = shardc.matmul %a, %w1 : (tensor<8x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
      %loss = shardc.reduce_sum %y dims = [0, 1] : (tensor<8x4xf32>) -> tensor<f32>
      return %loss : tensor<f32>
    }
    ```

    `shardc-opt --shardc-pipeline-split="microbatches=2 schedule=gpipe"`
    adds `@pipeline_stage0` (w0's forward, sending `%a`'s micro-batches to
    stage 1, then their cotangents received back, and w0's update) and
    `@pipeline_stage1` (the rest, returning the loss).
  }];
  let options = [
    Option<"axis", "axis", "std::string", /*default=*/"\"pipe\"",
           "The mesh axis whose coordinate is the stage">,
    Option<"microbatches", "microbatches", "int64_t", /*default=*/"0",
           "Micro-batches per step (0: one per stage)">,
    Option<"schedule", "schedule", "std::string", /*default=*/"\"1f1b\"",
           "The order of the micro-batches' forwards and backwards: gpipe or 1f1b">,
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"sgd\"",
           "The update after the micro-batches: sgd or adam (with --shardc-training-step's betas and epsilon)">,
  ];
  let dependentDialects = ["::shardc::ShardcDialect"];
}

def ShardcAutoShard : Pass<"shardc-auto-shard", "::mlir::ModuleOp"> {
  let summary = "Chooses the sharding of every unannotated value by cost, under a memory budget.";
  let description = [{
    Auto-sharding (docs/auto-sharding.md): an integer program, solved with
    CBC, picks one strategy per op (an assignment of mesh axes to the
    factors of its sharding rule, replication included) and one sharding
    per unannotated argument and result, minimizing the plan's estimated
    time under the cost model the partitioner and `shardc simulate` use:
    each op's FLOPs at its local sizes, plus the alpha-beta time of every
    reshard from what a producer makes to what its consumer needs (a value
    moved into a layout once serves every consumer needing it). The live
    bytes per device at every point of the program (arguments, values
    until their last use, moved copies) stay within `memory-budget`, or,
    without one, within the device memory of `machine` (its
    `memory_bytes`; no budget where the file gives none, or with
    `memory-budget=none`). User annotations (argument, result and op-result shardings,
    `sharding_constraint`s) are hard constraints; a training step's next
    parameter (`shardc.next`) is laid out like its parameter.

    The plan is written as annotations: every value gets its sharding (an
    op whose contracting factor is split gets the pending sum, `partial`),
    and a consumer that needs another layout reads the value through a
    `shardc.sharding_constraint`. `--shardc-propagate` and
    `--shardc-partition` then follow it.

    The solver's work is bounded by counts (simplex iterations,
    branch-and-bound nodes), so the plan is the same on any machine;
    `time-limit` is a wall-clock backstop past them. Stopped by either, CBC's
    best plan is kept; if it has none, a local search (each op in turn to
    its cheapest strategy given its neighbours, until nothing improves)
    gives the plan.

    Example (`shardc compile --auto-shard --propagate`): the unannotated

    ```mlir
    shardc.mesh @mesh ["model"=4]
    func.func @main(%x: tensor<16x64xf32>, %w0: tensor<64x256xf32>,
                    %w1: tensor<256x64xf32>) -> tensor<16x64xf32> {
      %h = shardc.matmul %x, %w0 : (tensor<16x64xf32>, tensor<64x256xf32>) -> tensor<16x256xf32>
      %u = shardc.relu %h : tensor<16x256xf32>
      %z = shardc.matmul %u, %w1 : (tensor<16x256xf32>, tensor<256x64xf32>) -> tensor<16x64xf32>
      return %z : tensor<16x64xf32>
    }
    ```

    gets Megatron's layout: `w0` split by columns, `w1` by rows, `z` a
    pending sum over `model`.

    Constraints: every op has one tensor result and a sharding rule (or is
    a constant or a sharding constraint); the function has a mesh; a plan
    fits `memory-budget` (else the error gives the smallest peak a plan was
    found to reach, and a bound no plan goes below); `memory-budget` is a
    byte count with an optional K, M or G, or `none`.
  }];
  let options = [
    Option<"memoryBudget", "memory-budget", "std::string", /*default=*/"\"\"",
           "Peak live bytes per device the plan may reach (K, M, G "
           "suffixes); by default the machine file's device memory (none "
           "where it gives none); 'none': no budget">,
    Option<"timeLimit", "time-limit", "double", /*default=*/"0",
           "Wall-clock backstop on the solve, in seconds (0: none, the "
           "solver's work limits bound it): past it the best plan found "
           "is taken">,
    Option<"machine", "machine", "std::string", /*default=*/"\"\"",
           "A machine description file (docs/machines.md) to price on; "
           "default: the alpha-beta preset">,
    Option<"linkLatency", "link-latency", "double", /*default=*/"0",
           "Overrides the machine's intra-node seconds per message">,
    Option<"linkBandwidth", "link-bandwidth", "double", /*default=*/"0",
           "Overrides the machine's intra-node bytes per second">,
    Option<"flopRate", "flops", "double", /*default=*/"0",
           "Overrides the machine's f32 FLOP/s">,
  ];
  let dependentDialects = ["::shardc::ShardcDialect"];
}

def ShardcPropagate : Pass<"shardc-propagate", "::mlir::ModuleOp"> {
  let summary = "Gives every value a sharding, starting from the annotated ones.";
  let description = [{
    Starts from the shardings the program states — function argument and
    result attributes `shardc.sharding`, `shardc.sharding_constraint`, and
    `shardc.sharding` attributes already on op results — and carries them
    forward and backward through every op's sharding rule (the
    `ShardingRuleOpInterface`, in factor form) until nothing changes. Then
    every op result, function argument and function result without a
    sharding gets one: the inferred one, or fully replicated when no sharding
    reached it.

    * User annotations are never changed (a user-given `partial` is kept).
    * Inferred shardings only grow (an axis list is only ever extended), so
      the pass terminates; it runs in time linear in the program size.
    * Partial axes are never inferred: that a matmul with a sharded
      contracting dim produces a pending sum is the partitioner's business.
    * Conflicts are resolved deterministically: compatible candidates merge
      to the longest; otherwise user annotations beat propagated shardings,
      then the larger tensor's sharding is kept, then operand order; a mesh
      axis shards at most one factor of an op, parallel factors first. A
      factor's axes divide its size unless the factor is a whole dim of
      every tensor holding it (then the dim is padded, docs/sharding.md).
    * Running the pass twice gives the same module.

    Functions marked `shardc.spmd` (already partitioned) and external
    functions are skipped; so is a function in a module without a mesh.
    A function that still holds composite ops (a training step before
    autodiff, which applies their own gradient rules) is propagated
    through a copy whose composites are expanded, and each value,
    a composite's result included, takes its layout there.
    The rules and the merge are documented in docs/propagation.md.

    Example (`shardc-opt --shardc-propagate`), Megatron's column then row
    split:

    ```mlir
    shardc.mesh @mesh ["model"=4]
    func.func @mlp(%x: tensor<16x64xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {} ]>},
                   %w0: tensor<64x256xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"model"} ]>},
                   %w1: tensor<256x64xf32>)
        -> (tensor<16x64xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {} ]>}) {
      %h = shardc.matmul %x, %w0 : (tensor<16x64xf32>, tensor<64x256xf32>) -> tensor<16x256xf32>
      %r = shardc.relu %h : tensor<16x256xf32>
      %y = shardc.matmul %r, %w1 : (tensor<16x256xf32>, tensor<256x64xf32>) -> tensor<16x64xf32>
      return %y : tensor<16x64xf32>
    }
    ```

    becomes (`%w1` gets `[{"model"}, {} ]`, `%h` and `%r` get
    `[{}, {"model"} ]`, `%y` is replicated like the output):

    ```
    func.func @mlp(..., %w1: tensor<256x64xf32> {shardc.sharding = #shardc.sharding<@mesh, [{"model"}, {} ]>}) -> ... {
      %h = shardc.matmul %x, %w0 {shardc.sharding = #shardc.sharding<@mesh, [{}, {"model"} ]>} : ...
      %r = shardc.relu %h {shardc.sharding = #shardc.sharding<@mesh, [{}, {"model"} ]>} : tensor<16x256xf32>
      %y = shardc.matmul %r, %w1 {shardc.sharding = #shardc.sharding<@mesh, [{}, {} ]>} : ...
      return %y : tensor<16x64xf32>
    }
    ```

    With `explain=true`, every value gets a remark saying its sharding and
    where it came from, and every resolved conflict a remark saying which
    candidate lost and why:

    ```
    mlp.mlir:5:8: remark: result #0 of 'shardc.matmul' is #shardc.sharding<@mesh, [{}, {"model"} ]> (propagated from argument #1 through 'shardc.matmul' at mlp.mlir:5:8)
    ```
  }];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark per value with its sharding and its origin, and "
           "one per resolved conflict">,
  ];
  let dependentDialects = ["::shardc::ShardcDialect"];
}

def ShardcPartition : Pass<"shardc-partition", "::mlir::ModuleOp"> {
  let summary = "Rewrites a sharded program into the per-device (SPMD) program.";
  let description = [{
    Takes a function whose every value has a sharding (run
    `--shardc-propagate` first) and rewrites it into the program every device
    of the mesh runs on its local blocks: types become local shapes, and the
    collectives the layouts need are inserted. The function is marked
    `shardc.spmd`; its argument and result shardings stay, describing the
    global layout its arguments and results are blocks of.

    * Each op is computed in the layout, allowed by its sharding rule, that
      moves the fewest bytes: its operands are resharded into it, its result
      comes out of it (and is resharded later, where a consumer needs
      another layout). Candidates come from the shardings around the op:
      all of them, the result's alone, the operands' alone, each operand's.
    * A contracting factor split over some axes makes the result a pending
      partial sum over them. It is materialized only where needed: an
      `all_reduce` where a consumer needs the whole value, a
      `reduce_scatter` where it needs the value split over the summed axis
      (never an all_reduce followed by a slice).
    * Reshards come from the ReshardPlanner: `all_gather`, free
      `all_slice`, `all_to_all` to move an axis between dims,
      `collective_permute` when blocks only change owners. A value needed
      in one layout by several consumers is moved once.
    * `sharding_constraint` ops disappear (their sharding is realized by a
      reshard); constants are materialized whole and sliced.
    * Every inserted op carries the sharding its local value represents.

    Example (`shardc-opt --shardc-propagate --shardc-partition`), the
    Megatron MLP on `["model"=4]`:

    ```mlir
    shardc.mesh @mesh ["model"=4]
    func.func @mlp(%x: tensor<16x64xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {} ]>},
                   %w0: tensor<64x256xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {"model"} ]>},
                   %w1: tensor<256x64xf32>)
        -> (tensor<16x64xf32> {shardc.sharding = #shardc.sharding<@mesh, [{}, {} ]>}) {
      %h = shardc.matmul %x, %w0 : (tensor<16x64xf32>, tensor<64x256xf32>) -> tensor<16x256xf32>
      %r = shardc.relu %h : tensor<16x256xf32>
      %y = shardc.matmul %r, %w1 : (tensor<16x256xf32>, tensor<256x64xf32>) -> tensor<16x64xf32>
      return %y : tensor<16x64xf32>
    }
    ```

    becomes, per device, `matmul [16,64]x[64,64]`, `relu`, `matmul
    [16,64]x[64,64]` (a partial sum over "model") and one
    `shardc.all_reduce ... on @mesh axes = ["model"]`.

    With `explain=true`, every collective gets a `shardc.reshard_for`
    dictionary (`include/shardc/Transforms/ReshardRecord.h`): the consumer
    that needed the value moved, the layout it had and the one wanted, and
    the consumer's chosen layout against its alternatives, priced as the
    partitioner prices candidates. `shardc explain` prints it.
  }];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Record on every collective the consumer that needed it and "
           "what its alternatives would have cost">,
    Option<"machine", "machine", "std::string", /*default=*/"\"\"",
           "A machine description file (docs/machines.md) to price on; "
           "default: the alpha-beta preset">,
    Option<"linkLatency", "link-latency", "double", /*default=*/"0",
           "Overrides the machine's intra-node seconds per message">,
    Option<"linkBandwidth", "link-bandwidth", "double", /*default=*/"0",
           "Overrides the machine's intra-node bytes per second">,
    Option<"flopRate", "flops", "double", /*default=*/"0",
           "Overrides the machine's f32 FLOP/s">,
  ];
  let dependentDialects = ["::shardc::ShardcDialect"];
}

def ShardcCleanup : Pass<"shardc-cleanup", "::mlir::func::FuncOp"> {
  let summary = "Removes redundant collective pairs and repeated ops from an SPMD program.";
  let description = [{
    Peephole rewrites on per-device programs, for IR written by hand or
    produced by other tools (the partitioner itself plans reshards that need
    none of them, and runs this pass after it as a safety net):

    * `all_slice(all_gather(x))` over the same axes and dim is `x`;
    * `all_slice(all_reduce(x))` over the same axes is one
      `reduce_scatter(x)` on the slice's dim (a sum then a slice moves
      `2(n-1)/n` of the data; reduce-scatter moves `(n-1)/n`);
    * `all_slice` of a splat `shardc.constant` is the smaller splat (the
      optimizer's decay factors, for one, need no slicing);
    * a `collective_permute` whose pairs are all `[i, i]` is its operand;
    * a collective whose axes all have size 1 is its operand.

    Then equal ops become one (MLIR's common-subexpression elimination:
    the same op on the same operands with the same attributes, every
    shardc op being free of side effects). The partitioner builds what a
    consumer needs next to the consumer, so this is where an uneven dim's
    padding mask (`axis_index`, `iota`, `compare`), built for every op that
    must skip the padding, and a table's row offset, built for the lookup
    and again for its gradient, become one computation per device.

    ```mlir
    shardc.mesh @mesh ["x"=2]
    func.func @f(%z: tensor<4x64xf32>) -> tensor<4x32xf32> attributes {shardc.spmd} {
      %s = shardc.all_reduce %z on @mesh axes = ["x"] : tensor<4x64xf32>
      %r = shardc.all_slice %s on @mesh axes = ["x"] dim = 1 : tensor<4x64xf32> -> tensor<4x32xf32>
      return %r : tensor<4x32xf32>
    }
    ```

    becomes one `shardc.reduce_scatter %z on @mesh axes = ["x"] dim = 1`.
  }];
  let dependentDialects = ["::shardc::ShardcDialect"];
}

def ShardcPrintShardingRules : Pass<"shardc-print-sharding-rules"> {
  let summary = "Attaches every op's sharding rule as an attribute (for tests).";
  let description = [{
    Sets `sharding_rule = #shardc.sharding_rule<...>` on every op that
    implements `ShardingRuleOpInterface`, so that lit tests pin each op's
    rule with FileCheck (as Shardy's `-sdy-populate-op-sharding-rules`
    does). It changes nothing else; the attribute means nothing to the other
    passes.

    ```mlir
    func.func @f(%x: tensor<16x64xf32>, %w: tensor<64x128xf32>) -> tensor<16x128xf32> {
      %y = shardc.matmul %x, %w : (tensor<16x64xf32>, tensor<64x128xf32>) -> tensor<16x128xf32>
      return %y : tensor<16x128xf32>
    }
    ```

    gets, on the matmul,

    ```
    {sharding_rule = #shardc.sharding_rule<([f1, f0], [f0, f2]) -> ([f1, f2]) {f0=64 reduction, f1=16, f2=128}>}
    ```

    Constraints: every op's rule fits its operand and result shapes
    (`ShardingRule::matchesOp`); otherwise the pass fails with an internal
    error naming the rule.
  }];
  let dependentDialects = ["::shardc::ShardcDialect"];
}

#endif // SHARDC_TRANSFORMS_PASSES_TD

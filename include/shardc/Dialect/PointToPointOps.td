//===- PointToPointOps.td - send and recv ------------------*- tablegen -*-===//
//
// Included by ShardcOps.td after axis_index: like it, these ops exist only
// in per-device programs and name a mesh by symbol.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_DIALECT_POINTTOPOINTOPS_TD
#define SHARDC_DIALECT_POINTTOPOINTOPS_TD

//===----------------------------------------------------------------------===//
// Point to point: send, recv (lib/Dialect/PointToPointOps.cpp,
// lib/Interpreter/PointToPoint.cpp)
//===----------------------------------------------------------------------===//
// A pipeline stage hands activations to the next stage and gradients back to
// the previous one, one device to one device. The peer of a device is the
// device with the same coordinates on every mesh axis but `axis`, where its
// coordinate is `peer`. Messages between two devices arrive in the order
// they were sent. Neither op is pure: a recv consumes a message, so two are
// never merged or removed.

def Shardc_SendOp : Shardc_Op<"send", [SameOperandsAndResultType,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Hands this device's operand to the device at coordinate `peer` of `axis`.";
  let description = [{
    Sends `input` to the device whose coordinate along `axis` of `mesh` is
    `peer` and whose other coordinates are this device's. The send is
    buffered: it returns once the tensor is on its way, so two devices may
    send to each other before either receives. The result is the operand
    (nothing uses it; it keeps every op a one-result op for the
    interpreter). Pipeline programs (`shardc pipeline`, docs/pipeline.md)
    send a stage's activations forward and the gradients of what it
    received back:

    ```mlir
    // stage 0 of ["pipe"=4] hands h to stage 1
    %s = shardc.send %h on @mesh axis = "pipe" to = 1 : tensor<4x64xf32>
    ```

    Constraints: `axis` is an axis of `mesh`; `0 <= peer < size(axis)`.
  }];
  let arguments = (ins Shardc_Tensor:$input, FlatSymbolRefAttr:$mesh,
                       StrAttr:$axis, I64Attr:$peer);
  let results = (outs Shardc_Tensor:$result);
  let assemblyFormat = "$input `on` $mesh `axis` `=` $axis `to` `=` $peer attr-dict `:` type($result)";
}

def Shardc_RecvOp : Shardc_Op<"recv", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "The next tensor the device at coordinate `peer` of `axis` sent to this one.";
  let description = [{
    Receives, in the order they were sent, the next tensor that the device
    whose coordinate along `axis` of `mesh` is `peer` (and whose other
    coordinates are this device's) sent to this device with `shardc.send`.
    It waits until that tensor has arrived. The result type says what is
    expected; a tensor of another shape or element type is an error at
    run time.

    ```mlir
    // stage 1 of ["pipe"=4] takes stage 0's h
    %h = shardc.recv on @mesh axis = "pipe" from = 0 : tensor<4x64xf32>
    ```

    Constraints: `axis` is an axis of `mesh`; `0 <= peer < size(axis)`;
    the result is a statically shaped tensor.
  }];
  let arguments = (ins FlatSymbolRefAttr:$mesh, StrAttr:$axis, I64Attr:$peer);
  let results = (outs Shardc_Tensor:$result);
  let assemblyFormat = "`on` $mesh `axis` `=` $axis `from` `=` $peer attr-dict `:` type($result)";
}

#endif // SHARDC_DIALECT_POINTTOPOINTOPS_TD

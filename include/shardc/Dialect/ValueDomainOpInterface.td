//===- ValueDomainOpInterface.td - where an op is defined --*- tablegen -*-===//

#ifndef SHARDC_DIALECT_VALUEDOMAINOPINTERFACE_TD
#define SHARDC_DIALECT_VALUEDOMAINOPINTERFACE_TD

include "mlir/IR/OpBase.td"

def Shardc_ValueDomainOpInterface : OpInterface<"ValueDomainOpInterface"> {
  let cppNamespace = "::shardc";
  let description = [{
    The values an elementwise op or a reduction is defined and well
    conditioned on, and how its result behaves: what a generator of random programs (the
    differential test, tools/shardc-difftest) must know to feed the op
    meaningful operands, declared where the op is defined so that a new op
    is drawn without anyone editing the generator.

    Every method is static (asked of a registered op name, before any op
    exists) and has a default: any finite operand, a result that may differ
    in the last bit between two kernels, continuous everywhere. An op
    declares only where it differs. `shardc.log` needs positive operands;
    `shardc.div` a divisor bounded away from 0; `shardc.exp` arguments of
    moderate magnitude (beyond them it overflows or its rounding grows);
    `shardc.step` jumps at 0, so a rounding difference in its operand flips
    its result; `shardc.reduce_max` is exact and its gradient's mask jumps
    where two elements tie.

    Constraints: `getOperandDomain` answers for every operand index (the
    default for indices past the op's operands).
  }];
  let methods = [
    StaticInterfaceMethod<[{
        The values operand `operand` must hold for the op to be defined and
        well conditioned.
      }],
      "::shardc::OperandDomain", "getOperandDomain", (ins "unsigned":$operand),
      [{}], [{ return ::shardc::OperandDomain(); }]>,
    StaticInterfaceMethod<[{
        True when the result is the correctly rounded value of the op's
        formula (IEEE + - * / sqrt, or exact: neg, abs, max): every kernel,
        vectorized or not, gives the same bits for the same operands.
      }],
      "bool", "isCorrectlyRounded", (ins), [{}], [{ return false; }]>,
    StaticInterfaceMethod<[{
        Where the op (or its derivative) is discontinuous: a rounding
        difference in an operand near there changes the result (or the
        gradient) by more than rounding.
      }],
      "::shardc::Continuity", "getContinuity", (ins), [{}],
      [{ return ::shardc::Continuity::Continuous; }]>,
  ];
}

#endif // SHARDC_DIALECT_VALUEDOMAINOPINTERFACE_TD

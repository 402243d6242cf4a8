//===- NumericCheck.h - a sharded result against the reference --*- C++ -*-===//
//
// Every check of a partitioning (`shardc simulate`, `exec`, `train`, the
// differential tester, the tests) compares what the sharded program computed
// with what the reference interpreter computed on the unsharded program.
// Both run in float32 and add their partial sums in different orders, so
// they agree only up to rounding; this file decides how much disagreement
// is rounding and how much is a wrong plan (docs/cli.md, "How results are
// checked").
//
// The error of a tensor is max|got - want| divided by its scale,
// max(max|want|, kFamilyScaleFloor * S), where S is the largest |want| of
// the tensor's family: the tensors computed together by the same program
// (all outputs of one run; all parameters of one training run). Dividing by
// the tensor's own magnitude makes the figure scale-free; the floor keeps a
// tensor that is zero in exact arithmetic (a key bias's gradient: softmax
// ignores a per-row constant) from turning the rounding noise of the sums
// that cancel to it, ~sqrt(K) * eps * S, into "100 % error".
//
// Training amplifies rounding: Adam divides each gradient by its running
// magnitude, so a gradient that is rounding noise moves its parameter by up
// to the learning rate per step in a direction the noise picks, and two
// correct runs end apart. `shardc train` then asks the unsharded run how far
// it moves itself when its initial parameters change by one float32 ulp
// (perturbByOneUlp); a difference within kSensitivityMargin times that is
// rounding the training amplified, not a wrong plan. `simulate` and `exec`
// ask the unsharded program the same of its outputs (one Adam step amplifies
// as training does).
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_SUPPORT_NUMERICCHECK_H
#define SHARDC_SUPPORT_NUMERICCHECK_H

#include "shardc/Support/Tensor.h"

#include <optional>
#include <utility>
#include <vector>

namespace shardc {

/// A tensor is judged on at least this fraction of its family's magnitude.
/// An error then goes unseen only when the whole tensor is below
/// tolerance * kFamilyScaleFloor * S (1e-7 * S at `simulate`'s 1e-5): the
/// size of float32 rounding in sums of magnitude S, where the tensor's
/// values are indistinguishable from that noise anyway.
inline constexpr double kFamilyScaleFloor = 1e-2;

/// How many times the reference's own change under a one-ulp perturbation
/// of its inputs a sharded result may differ from it.
inline constexpr double kSensitivityMargin = 10;

/// How far a bf16 or f16 result of a sharded program may be from the
/// unsharded one's, relative to its family's scale: kHalfRoundings times the
/// type's unit roundoff, 2^-8 for bf16 (8 bits of precision) and 2^-11 for
/// f16. A sharded program rounds partial results that the unsharded one
/// sums before rounding once; each such rounding is within one unit, and a
/// backward pass compounds a few of them (a bf16 attention's gradients end
/// ~9 units apart), while a wrong plan (a lost partial sum) is off by ~2^8.
inline constexpr double kHalfRoundings = 16;
double halfTolerance(DType dtype);

/// How many one-ulp perturbations a sensitivity is measured on (the
/// largest movement counts). One pattern of signs is a poor probe: an Adam
/// parameter whose gradient is within a few ulps of zero moves by whatever
/// the signs near it happen to give, and a sharded run's summation order is
/// another pattern again. Probe 0 moves elements up and down in turn, the
/// others by signs hashed from the probe and the element's index.
inline constexpr unsigned kSensitivityProbes = 4;

/// `t` with every element moved by one ulp of its type (f32, bf16, f16), in
/// the direction `probe` picks for it (see kSensitivityProbes; zeros and
/// non-finite values stay): inputs that differ from `t` only by rounding, to
/// measure how much a computation amplifies it. With `working` (bf16 or
/// f16), an f32 `t` moves by one ulp of that type instead: the rounding of a
/// program that computes on working copies.
Tensor perturbByOneUlp(const Tensor &t,
                       std::optional<DType> working = std::nullopt,
                       unsigned probe = 0);

/// Raises each of `movement` to how far that element of `moved` (a probe's
/// run: perturbByOneUlp inputs, or sums rounded otherwise) is from `want`;
/// only finite elements of float tensors of `want`'s shape count.
void noteElementMovement(const Tensor &moved, const Tensor &want,
                         std::vector<double> &movement);

/// The tolerance `got` is checked against `want` with, given how far the
/// probes moved each element (`movement`, from noteElementMovement):
/// `tolerance` if some element beyond it moves less than 1/kSensitivityMargin
/// of its error (rounding does not explain it: the tensor fails as it is),
/// else the largest relative error among the elements beyond it (each one
/// explained by the rounding the program amplifies, element by element).
double excusedTolerance(const Tensor &got, const Tensor &want,
                        llvm::ArrayRef<double> movement, double familyScale,
                        double tolerance);

/// Where `got` and `want` disagree on which elements are NaN, +inf or -inf.
struct NonFiniteMismatch {
  int64_t count = 0;
  /// The first such element (row-major index) and its two values.
  int64_t firstIndex = -1;
  float got = 0, want = 0;
};

/// The largest finite |x| over the reference tensors of a family: the S of
/// compareToReference.
double familyScale(llvm::ArrayRef<Tensor> references);

/// The error of `got` against the reference `want` and the absolute one,
/// max |got - want| over the finite elements of `want`. The error is the
/// absolute one divided by max(max|want|, kFamilyScaleFloor *
/// `familyScale`) (the absolute one when that is 0); a `familyScale` of 0
/// judges the tensor on its own magnitude alone. A non-finite element
/// matches one of its class (NaN, +inf, -inf): the same NaN or overflow in
/// both programs is no error of the sharding. Any other pair with a
/// non-finite value, or different shapes, make both errors infinite; such
/// elements are counted in `mismatch` when given.
std::pair<double, double>
compareToReference(const Tensor &got, const Tensor &want,
                   NonFiniteMismatch *mismatch = nullptr,
                   double familyScale = 0);

} // namespace shardc

#endif // SHARDC_SUPPORT_NUMERICCHECK_H

//===- FusedChains.cpp - one loop for a known chain of fused ops ----------===//
//
// A chain is written as a type (an expression template): `Apply<OpT, ...>`
// an op of class OpT on operands, `Whole<K>` a leaf tensor read whole,
// `Uniform<K>` a value whose elements are all equal (a splat constant, a
// broadcast scalar), `Stored<K, E>` the value of E also written out. The
// same type matches a group node for node and computes it: a vector of
// elements at a time, each op through its own ODS `computeElements` on an
// Eigen array of that vector's width.
//
// The chains are the largest passes of a GPT training step outside its
// GEMMs: the Adam update of every parameter and gelu's gradient.
//
// Why the bits are the op-by-op run's: a chain takes only ops that are
// correctly rounded (add, sub, mul, div, sqrt), so each element's result
// is the one IEEE result of its operands' elements, whatever the vector
// width, an element's position, or whether the ops run one by one over
// whole tensors or all at once per element.
//
//===----------------------------------------------------------------------===//

#include "FusedChains.h"

#include "shardc/Dialect/ShardcDialect.h"

#include "mlir/IR/BuiltinTypes.h"

#include "llvm/ADT/SmallBitVector.h"

#include <Eigen/Core>

#include <array>
#include <cstdint>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

using namespace mlir;
using namespace shardc;
using namespace shardc::detail;
using llvm::ArrayRef;
using llvm::SmallVector;

namespace {

//===----------------------------------------------------------------------===//
// The chain language
//===----------------------------------------------------------------------===//

/// Leaf `K` of the chain's leaves, an f32 tensor read whole. The same `K`
/// in two places is the same tensor (the Adam update's g in g and g * g).
template <unsigned K> struct Whole {};
/// Uniform value `K`: a splat constant node, or a broadcast of one element
/// (a view leaf whose strides are all 0).
template <unsigned K> struct Uniform {};
/// The op of class `OpT` (correctly rounded on f32) on `Operands`, in the
/// op's operand order.
template <typename OpT, typename... Operands> struct Apply {};
/// The value of `E`, which the group also writes out (a stored node, or the
/// root), as the chain's output `K`.
template <unsigned K, typename E> struct Stored {};

/// How many leaves, uniform values and outputs a chain can bind.
constexpr unsigned kMaxSlots = 8;

//===----------------------------------------------------------------------===//
// Matching a group
//===----------------------------------------------------------------------===//

bool isF32(Value value) {
  return cast<RankedTensorType>(value.getType()).getElementType().isF32();
}

/// What a match binds: which leaf each `Whole<K>` reads, where each
/// `Uniform<K>` comes from, which node each `Stored<K>` is.
struct Bindings {
  std::array<int, kMaxSlots> whole;
  std::array<FusedGroup::Input, kMaxSlots> uniform;
  std::array<bool, kMaxSlots> uniformBound{};
  std::array<int, kMaxSlots> stored;
  /// The nodes the chain accounts for: it computes a group only when it
  /// accounts for every node.
  llvm::SmallBitVector covered;

  explicit Bindings(const FusedGroup &group) : covered(group.nodes.size()) {
    whole.fill(-1);
    stored.fill(-1);
  }
};

template <typename E> struct Chain;

template <unsigned K> struct Chain<Whole<K>> {
  static_assert(K < kMaxSlots);
  static bool match(const FusedGroup &group, FusedGroup::Input input,
                    Bindings &b) {
    if (input.isNode)
      return false;
    const FusedGroup::Leaf &leaf = group.leaves[input.index];
    if (leaf.isView || leaf.width != 4 || !isF32(leaf.value))
      return false;
    if (b.whole[K] >= 0 && b.whole[K] != static_cast<int>(input.index))
      return false;
    b.whole[K] = input.index;
    return true;
  }
};

template <unsigned K> struct Chain<Uniform<K>> {
  static_assert(K < kMaxSlots);
  static bool match(const FusedGroup &group, FusedGroup::Input input,
                    Bindings &b) {
    if (b.uniformBound[K])
      return false;
    if (input.isNode) {
      // A node without operands that markUniform found uniform is a splat
      // constant: its value is the same wherever it is computed.
      const FusedGroup::Node &node = group.nodes[input.index];
      if (!node.uniform || !node.inputs.empty() || node.width != 4 ||
          !isF32(node.op->getResult(0)))
        return false;
      b.covered.set(input.index);
    } else {
      const FusedGroup::Leaf &leaf = group.leaves[input.index];
      if (!leaf.uniform || leaf.width != 4 || !isF32(leaf.value))
        return false;
    }
    b.uniform[K] = input;
    b.uniformBound[K] = true;
    return true;
  }
};

template <typename OpT, typename... Operands>
struct Chain<Apply<OpT, Operands...>> {
  static bool match(const FusedGroup &group, FusedGroup::Input input,
                    Bindings &b) {
    if (!input.isNode)
      return false;
    const FusedGroup::Node &node = group.nodes[input.index];
    if (!isa<OpT>(node.op) || node.width != 4 ||
        !isF32(node.op->getResult(0)) ||
        node.inputs.size() != sizeof...(Operands))
      return false;
    b.covered.set(input.index);
    unsigned i = 0;
    return (Chain<Operands>::match(group, node.inputs[i++], b) && ...);
  }
};

template <unsigned K, typename E> struct Chain<Stored<K, E>> {
  static_assert(K < kMaxSlots);
  static bool match(const FusedGroup &group, FusedGroup::Input input,
                    Bindings &b) {
    if (!input.isNode || b.stored[K] >= 0)
      return false;
    b.stored[K] = input.index;
    return Chain<E>::match(group, input, b);
  }
};

//===----------------------------------------------------------------------===//
// Computing a group
//===----------------------------------------------------------------------===//

/// What a chain's loop reads and writes, resolved for one run.
struct Operands {
  std::array<const float *, kMaxSlots> whole{};
  std::array<float, kMaxSlots> uniform{};
  std::array<float *, kMaxSlots> stored{};
};

/// Elements per step of a chain's loop: a 256-bit vector of f32 (two SSE
/// vectors where the target has no AVX).
constexpr int64_t kLanes = 8;

/// Writes the elements of `v` to `out`, with a non-temporal store when
/// `Streamed` and the vector is a whole AVX or SSE one (`out` then 32-byte
/// aligned).
template <bool Streamed, typename V> void write(float *out, const V &v) {
  if constexpr (Streamed && V::SizeAtCompileTime == kLanes) {
#if defined(__AVX__)
    _mm256_stream_ps(out, _mm256_loadu_ps(v.data()));
    return;
#elif defined(__SSE2__)
    _mm_stream_ps(out, _mm_loadu_ps(v.data()));
    _mm_stream_ps(out + 4, _mm_loadu_ps(v.data() + 4));
    return;
#endif
  }
  Eigen::Map<V> target(out);
  target = v;
}

template <typename E> struct Compute;

template <unsigned K> struct Compute<Whole<K>> {
  template <typename V, bool Streamed>
  static V at(const Operands &o, int64_t i) {
    return Eigen::Map<const V>(o.whole[K] + i);
  }
};

template <unsigned K> struct Compute<Uniform<K>> {
  template <typename V, bool Streamed> static V at(const Operands &o, int64_t) {
    return V::Constant(o.uniform[K]);
  }
};

template <typename OpT, typename A> struct Compute<Apply<OpT, A>> {
  template <typename V, bool Streamed>
  static V at(const Operands &o, int64_t i) {
    V x = Compute<A>::template at<V, Streamed>(o, i);
    return OpT::computeElements(x);
  }
};

template <typename OpT, typename A, typename B>
struct Compute<Apply<OpT, A, B>> {
  template <typename V, bool Streamed>
  static V at(const Operands &o, int64_t i) {
    V a = Compute<A>::template at<V, Streamed>(o, i);
    V b = Compute<B>::template at<V, Streamed>(o, i);
    return OpT::computeElements(a, b);
  }
};

template <unsigned K, typename E> struct Compute<Stored<K, E>> {
  template <typename V, bool Streamed>
  static V at(const Operands &o, int64_t i) {
    V v = Compute<E>::template at<V, Streamed>(o, i);
    write<Streamed>(o.stored[K] + i, v);
    return v;
  }
};

/// The loop over `n` elements: whole vectors, then the rest one by one.
template <typename Root, bool Streamed>
void computeChain(const Operands &o, int64_t n) {
  using Vector = Eigen::Array<float, kLanes, 1>;
  using Scalar = Eigen::Array<float, 1, 1>;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    (void)Compute<Root>::template at<Vector, Streamed>(o, i);
  for (; i < n; ++i)
    (void)Compute<Root>::template at<Scalar, false>(o, i);
}

/// A group matched by the chain `Root`, which must be a Stored (the root's
/// result is always written out).
template <typename Root> class ChainLoop : public FusedChain {
public:
  static std::unique_ptr<FusedChain> match(const FusedGroup &group) {
    Bindings b(group);
    unsigned root = group.nodes.size() - 1;
    if (!Chain<Root>::match(group, {true, root}, b) || !b.covered.all())
      return nullptr;
    // The chain writes out exactly the group's outputs: the stored nodes'
    // results in node order, then the root's.
    auto loop = std::unique_ptr<ChainLoop>(new ChainLoop);
    loop->numElements = group.numElements;
    SmallVector<int> outputOfNode(group.nodes.size(), -1);
    int numOutputs = 0;
    for (auto [k, node] : llvm::enumerate(group.nodes))
      if (node.stored || k == root)
        outputOfNode[k] = numOutputs++;
    int bound = 0;
    for (unsigned k = 0; k < kMaxSlots; ++k) {
      if (b.stored[k] < 0)
        continue;
      int &output = outputOfNode[b.stored[k]];
      if (output < 0)
        return nullptr;
      loop->outputOf[k] = output;
      output = -1;
      ++bound;
    }
    if (bound != numOutputs)
      return nullptr;
    loop->whole = b.whole;
    for (unsigned k = 0; k < kMaxSlots; ++k) {
      if (!b.uniformBound[k])
        continue;
      FusedGroup::Input input = b.uniform[k];
      if (input.isNode) {
        // A splat constant: its value, computed once here.
        const FusedGroup::Node &node = group.nodes[input.index];
        float value;
        node.hooks.evaluateElements(node.op, {}, &value, 0, 1);
        loop->uniformValue[k] = value;
      } else {
        loop->uniformLeaf[k] = input.index;
      }
    }
    return loop;
  }

  void run(ArrayRef<const Tensor *> leaves,
           ArrayRef<Tensor *> outputs) const override {
    Operands o;
    for (unsigned k = 0; k < kMaxSlots; ++k) {
      if (whole[k] >= 0)
        o.whole[k] =
            reinterpret_cast<const float *>(leaves[whole[k]]->rawData());
      // A uniform view repeats its operand's element 0.
      o.uniform[k] = uniformLeaf[k] >= 0
                         ? reinterpret_cast<const float *>(
                               leaves[uniformLeaf[k]]->rawData())[0]
                         : uniformValue[k];
      if (outputOf[k] >= 0)
        o.stored[k] =
            reinterpret_cast<float *>(outputs[outputOf[k]]->rawData());
    }
    bool streamed =
        numElements * static_cast<int64_t>(sizeof(float)) >=
            kStreamedResultBytes &&
        llvm::all_of(o.stored, [](float *p) {
          return reinterpret_cast<uintptr_t>(p) % (kLanes * sizeof(float)) == 0;
        });
    if (!streamed)
      return computeChain<Root, false>(o, numElements);
    computeChain<Root, true>(o, numElements);
    streamOutFence();
  }

private:
  ChainLoop() {
    whole.fill(-1);
    uniformLeaf.fill(-1);
    uniformValue.fill(0);
    outputOf.fill(-1);
  }
  int64_t numElements = 0;
  std::array<int, kMaxSlots> whole;
  std::array<int, kMaxSlots> uniformLeaf;
  std::array<float, kMaxSlots> uniformValue;
  std::array<int, kMaxSlots> outputOf;
};

//===----------------------------------------------------------------------===//
// The chains
//===----------------------------------------------------------------------===//

/// The Adam update of one parameter as lib/Transforms/TrainingStep.cpp
/// builds it, operand for operand: m' = b1 m + (1 - b1) g and v' = b2 v +
/// (1 - b2) g^2 (returned, and read by the update), and p - lr_t * m' /
/// (sqrt(v') / sqrt(1 - b2^t) + eps). Whole: m, g, v, p.
using NewMoment = Stored<0, Apply<AddOp, Apply<MulOp, Uniform<0>, Whole<0>>,
                                  Apply<MulOp, Uniform<1>, Whole<1>>>>;
using NewSecondMoment =
    Stored<1,
           Apply<AddOp, Apply<MulOp, Uniform<2>, Whole<2>>,
                 Apply<MulOp, Uniform<3>, Apply<MulOp, Whole<1>, Whole<1>>>>>;
using AdamDenominator =
    Apply<AddOp, Apply<DivOp, Apply<SqrtOp, NewSecondMoment>, Uniform<4>>,
          Uniform<5>>;
using AdamUpdate = Stored<
    2,
    Apply<SubOp, Whole<3>,
          Apply<MulOp, Uniform<6>, Apply<DivOp, NewMoment, AdamDenominator>>>>;

/// The gradient of gelu as its ODS gradient rule builds it
/// (ElementwiseOps.td), operand for operand, with t = tanh(c (x + a x^3)),
/// x and x^2 from the forward pass: g * (0.5 (1 + t) + (0.5 x) ((1 - t t)
/// (c + 3ac x^2))). Whole: g, t, x, x^2; uniform: 0.5 and 1 (each read
/// twice), c, 3ac.
using GeluGradientLeft =
    Apply<MulOp, Uniform<0>, Apply<AddOp, Uniform<1>, Whole<1>>>;
using GeluGradientRight = Apply<
    MulOp, Apply<MulOp, Uniform<2>, Whole<2>>,
    Apply<MulOp, Apply<SubOp, Uniform<3>, Apply<MulOp, Whole<1>, Whole<1>>>,
          Apply<AddOp, Uniform<4>, Apply<MulOp, Uniform<5>, Whole<3>>>>>;
using GeluGradient =
    Stored<0, Apply<MulOp, Whole<0>,
                    Apply<AddOp, GeluGradientLeft, GeluGradientRight>>>;

} // namespace

std::unique_ptr<FusedChain>
shardc::detail::matchFusedChain(const FusedGroup &group) {
  if (auto loop = ChainLoop<AdamUpdate>::match(group))
    return loop;
  return ChainLoop<GeluGradient>::match(group);
}

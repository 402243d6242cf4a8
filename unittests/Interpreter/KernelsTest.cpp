//===- KernelsTest.cpp - every kernel against a naive loop ----------------===//

#include "TestHelpers.h"

#include "shardc/Interpreter/Kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

using namespace mlir;
using namespace shardc;
using namespace shardc::testing;
using llvm::ArrayRef;
using llvm::SmallVector;

namespace {

using KernelsTest = KernelTestBase;

//===----------------------------------------------------------------------===//
// Naive references (double accumulation, multi-index loops)
//===----------------------------------------------------------------------===//

Tensor dotGeneralRef(const Tensor &lhs, const Tensor &rhs, ArrayRef<int64_t> lb,
                     ArrayRef<int64_t> rb, ArrayRef<int64_t> lc,
                     ArrayRef<int64_t> rc) {
  auto freeOf = [](int64_t rank, ArrayRef<int64_t> b, ArrayRef<int64_t> c) {
    SmallVector<int64_t> f;
    for (int64_t d = 0; d < rank; ++d)
      if (!llvm::is_contained(b, d) && !llvm::is_contained(c, d))
        f.push_back(d);
    return f;
  };
  SmallVector<int64_t> lf = freeOf(lhs.rank(), lb, lc),
                       rf = freeOf(rhs.rank(), rb, rc);
  SmallVector<int64_t> shape, cshape;
  for (int64_t d : lb)
    shape.push_back(lhs.dim(d));
  for (int64_t d : lf)
    shape.push_back(lhs.dim(d));
  for (int64_t d : rf)
    shape.push_back(rhs.dim(d));
  for (int64_t d : lc)
    cshape.push_back(lhs.dim(d));
  Tensor out = llvm::cantFail(Tensor::allocate(shape));
  SmallVector<int64_t> r(shape.size(), 0);
  if (out.numElements() == 0)
    return out;
  do {
    SmallVector<int64_t> li(lhs.rank()), ri(rhs.rank());
    size_t p = 0;
    for (size_t i = 0; i < lb.size(); ++i, ++p)
      li[lb[i]] = ri[rb[i]] = r[p];
    for (int64_t d : lf)
      li[d] = r[p++];
    for (int64_t d : rf)
      ri[d] = r[p++];
    double acc = 0;
    SmallVector<int64_t> c(cshape.size(), 0);
    if (checkedNumElements(cshape).value_or(0) > 0) {
      do {
        for (size_t i = 0; i < lc.size(); ++i)
          li[lc[i]] = ri[rc[i]] = c[i];
        acc += double(lhs.at(li)) * rhs.at(ri);
      } while (nextIndex(c, cshape));
    }
    out.at(r) = static_cast<float>(acc);
  } while (nextIndex(r, shape));
  return out;
}

Tensor reduceRef(const Tensor &in, ArrayRef<int64_t> dims, bool isMax) {
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < in.rank(); ++d)
    if (!llvm::is_contained(dims, d))
      shape.push_back(in.dim(d));
  int64_t n = checkedNumElements(shape).value_or(0);
  std::vector<double> acc(n, isMax ? -INFINITY : 0.0);
  SmallVector<int64_t> i(in.rank(), 0);
  do {
    if (in.numElements() == 0)
      break;
    SmallVector<int64_t> o;
    for (int64_t d = 0; d < in.rank(); ++d)
      if (!llvm::is_contained(dims, d))
        o.push_back(i[d]);
    double &a = acc[linearIndex(o, shape)];
    a = isMax ? std::max(a, double(in.at(i))) : a + in.at(i);
  } while (nextIndex(i, in.shape()));
  Tensor out = llvm::cantFail(Tensor::allocate(shape));
  for (int64_t k = 0; k < n; ++k)
    out.data()[k] = static_cast<float>(acc[k]);
  return out;
}

Tensor transposeRef(const Tensor &in, ArrayRef<int64_t> perm) {
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(in.dim(p));
  Tensor out = llvm::cantFail(Tensor::allocate(shape));
  SmallVector<int64_t> o(shape.size(), 0), i(in.rank());
  do {
    for (size_t k = 0; k < perm.size(); ++k)
      i[perm[k]] = o[k];
    out.at(o) = in.at(i);
  } while (nextIndex(o, shape));
  return out;
}

Tensor broadcastRef(const Tensor &in, ArrayRef<int64_t> dims,
                    ArrayRef<int64_t> shape) {
  Tensor out = llvm::cantFail(Tensor::allocate(shape));
  SmallVector<int64_t> o(shape.size(), 0), i(in.rank());
  do {
    for (size_t k = 0; k < dims.size(); ++k)
      i[k] = in.dim(k) == 1 ? 0 : o[dims[k]];
    out.at(o) = in.at(i);
  } while (nextIndex(o, shape));
  return out;
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

TEST_F(KernelsTest, Matmul) {
  for (auto [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{3, 4, 5},
                         {1, 7, 1},
                         {17, 33, 9},
                         {64, 48, 80}}) {
    Tensor a = randomIn({m, k}, "a"), b = randomIn({k, n}, "b");
    Tensor r = mustEval({&a, &b},
                        "shardc.matmul %a, %b : (" + tensorType({m, k}) + ", " +
                            tensorType({k, n}) + ") -> " + tensorType({m, n}),
                        {m, n});
    expectClose(r, dotGeneralRef(a, b, {}, {}, {1}, {0}), 1e-4f, 1e-5f);
  }
}

TEST_F(KernelsTest, BatchedMatmul) {
  Tensor a = randomIn({2, 3, 5, 4}, "a"), b = randomIn({2, 3, 4, 6}, "b");
  Tensor r = mustEval({&a, &b},
                      "shardc.matmul %a, %b : (tensor<2x3x5x4xf32>, "
                      "tensor<2x3x4x6xf32>) -> tensor<2x3x5x6xf32>",
                      {2, 3, 5, 6});
  expectClose(r, dotGeneralRef(a, b, {0, 1}, {0, 1}, {3}, {2}), 1e-4f);
}

TEST_F(KernelsTest, MatmulWithEmptyContraction) {
  Tensor a = randomIn({3, 0}, "a"), b = randomIn({0, 2}, "b");
  Tensor r = mustEval({&a, &b},
                      "shardc.matmul %a, %b : (tensor<3x0xf32>, "
                      "tensor<0x2xf32>) -> tensor<3x2xf32>",
                      {3, 2});
  for (float v : r.values())
    EXPECT_EQ(v, 0.0f);
}

struct DotCase {
  SmallVector<int64_t> lhs, rhs, lb, rb, lc, rc;
};

TEST_F(KernelsTest, DotGeneral) {
  std::vector<DotCase> cases = {
      // 'bqd,bkd->bqk' (rhs read as a transposed view).
      {{2, 8, 16}, {2, 8, 16}, {0}, {0}, {2}, {2}},
      // Plain [m,k] x [k,n].
      {{5, 7}, {7, 3}, {}, {}, {1}, {0}},
      // 'km,kn->mn' (lhs read as a transposed view).
      {{7, 5}, {7, 3}, {}, {}, {0}, {0}},
      // Both operands need a transposing copy; two contracting dims listed
      // in different orders.
      {{3, 2, 4, 5}, {5, 4, 6, 3}, {2}, {1}, {0, 3}, {3, 0}},
      // Two batch dims, paired out of order.
      {{2, 3, 4, 5}, {3, 2, 5, 6}, {1, 0}, {0, 1}, {3}, {2}},
      // No contraction at all: an outer product per batch.
      {{2, 3}, {2, 4}, {0}, {0}, {}, {}},
      // Everything contracted: a dot product.
      {{4, 6}, {4, 6}, {}, {}, {0, 1}, {0, 1}},
      // Attention on [B,S,H,Dh], read in place as strided matrices:
      // 'bshd,bthd->bhst' (rows H*Dh apart; the key transposed) ...
      {{2, 5, 3, 4}, {2, 6, 3, 4}, {0, 2}, {0, 2}, {3}, {3}},
      // ... 'bhst,bthd->bhsd' (the value's rows H*Dh apart) ...
      {{2, 3, 5, 6}, {2, 6, 3, 4}, {0, 1}, {0, 2}, {3}, {1}},
      // ... and 'bhsd,hde->bse', whose lhs rows (b, s) do not merge.
      {{2, 3, 5, 4}, {3, 4, 7}, {}, {}, {1, 3}, {0, 1}},
      // Two contracting dims merged on one side, in memory order, and a
      // size-1 free dim.
      {{2, 1, 3, 4}, {2, 3, 4, 6}, {0}, {0}, {2, 3}, {1, 2}},
      // Contracting dims listed against memory order: not one stride.
      {{2, 5, 3, 4}, {2, 4, 3, 6}, {0}, {0}, {3, 2}, {1, 2}},
  };
  for (const DotCase &c : cases) {
    Tensor a = randomIn(c.lhs, "a"), b = randomIn(c.rhs, "b");
    Tensor expected = dotGeneralRef(a, b, c.lb, c.rb, c.lc, c.rc);
    std::string text = "shardc.dot_general %a, %b batch = " + dimList(c.lb) +
                       " x " + dimList(c.rb) + ", contract = " + dimList(c.lc) +
                       " x " + dimList(c.rc) + " : (" + tensorType(c.lhs) +
                       ", " + tensorType(c.rhs) + ") -> " +
                       tensorType(expected.shape());
    Tensor r = mustEval({&a, &b}, text, expected.shape());
    expectClose(r, expected, 1e-4f, 1e-5f, text);
  }
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

TEST_F(KernelsTest, UnaryOps) {
  struct UnaryCase {
    const char *op;
    std::function<double(double)> ref;
    float lo, hi;
  };
  std::vector<UnaryCase> cases = {
      {"relu", [](double x) { return x > 0 ? x : 0.0; }, -2, 2},
      {"gelu",
       [](double x) {
         return 0.5 * x *
                (1 +
                 std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
       },
       -5, 5},
      {"exp", [](double x) { return std::exp(x); }, -5, 5},
      {"log", [](double x) { return std::log(x); }, 0.01f, 10},
      {"neg", [](double x) { return -x; }, -2, 2},
      {"tanh", [](double x) { return std::tanh(x); }, -6, 6},
      {"sqrt", [](double x) { return std::sqrt(x); }, 0, 10},
      {"rsqrt", [](double x) { return 1 / std::sqrt(x); }, 0.01f, 10},
      {"sigmoid", [](double x) { return 1 / (1 + std::exp(-x)); }, -10, 10},
      {"step", [](double x) { return x > 0 ? 1.0 : 0.0; }, -2, 2},
  };
  for (const UnaryCase &c : cases) {
    Tensor x = randomIn({7, 13}, c.op, c.lo, c.hi);
    Tensor expected = x.clone();
    for (float &v : expected.values())
      v = static_cast<float>(c.ref(v));
    Tensor r = mustEval(
        {&x}, std::string("shardc.") + c.op + " %a : " + tensorType({7, 13}),
        {7, 13});
    expectClose(r, expected, 2e-5f, 2e-6f, c.op);
  }
}

// sqrt and rsqrt are correctly rounded, at every position of a tensor and
// at the edges: Eigen's fast SIMD sqrt (rsqrt estimate and a Newton step)
// gave NaN for +inf and values off by an ulp in four of the packets' lanes
// but not in the scalar tail, so a sharded program (other local lengths)
// disagreed with the unsharded one.
TEST_F(KernelsTest, SqrtAndRsqrtAreCorrectlyRounded) {
  Tensor x = randomIn({7, 13}, "sqrt", 0.01f, 10);
  const float edges[] = {INFINITY, 0.0f, -0.0f, 1e-40f, 4.0f, 1.0f};
  for (auto [i, v] : llvm::enumerate(edges))
    x.data()[i * 7] = v;
  Tensor s = mustEval({&x}, "shardc.sqrt %a : tensor<7x13xf32>", {7, 13});
  Tensor r = mustEval({&x}, "shardc.rsqrt %a : tensor<7x13xf32>", {7, 13});
  for (int64_t i = 0; i < x.numElements(); ++i) {
    float v = x.data()[i];
    EXPECT_EQ(s.data()[i], std::sqrt(v)) << "sqrt(" << v << ") at " << i;
    EXPECT_EQ(r.data()[i], 1.0f / std::sqrt(v)) << "rsqrt(" << v << ") at "
                                                << i;
  }
}

// exp, sigmoid and log outside the range of normal floats, at every position
// of a tensor: Eigen's SIMD exp clamps its argument at -88.4 (so exp(-inf)
// was 2.9e-39, not 0) and its log reads a subnormal as the smallest normal,
// while the scalar path taken at a tensor's tail is right; sharded programs
// (other local lengths) disagreed with unsharded ones.
TEST_F(KernelsTest, ExpSigmoidLogBeyondNormalRange) {
  const float edges[] = {-INFINITY, -1e30f, -100.0f, -88.5f, -87.5f, 1e-40f,
                         1e-45f,    0.0f,   1.0f};
  for (auto [i, v] : llvm::enumerate(edges)) {
    // Every edge at every position of a row of 13 (three packets and a
    // tail).
    for (int64_t at = 0; at < 13; ++at) {
      Tensor x = randomIn({13}, "x", 0.5f, 2);
      x.data()[at] = v;
      Tensor e = mustEval({&x}, "shardc.exp %a : tensor<13xf32>", {13});
      Tensor s = mustEval({&x}, "shardc.sigmoid %a : tensor<13xf32>", {13});
      EXPECT_EQ(e.data()[at], std::exp(v)) << "exp(" << v << ") at " << at;
      EXPECT_NEAR(s.data()[at], std::exp(v) / (1 + std::exp(v)),
                  std::exp(v) * 1e-6f)
          << "sigmoid(" << v << ") at " << at;
      if (v > 0 && v < 1) {
        Tensor l = mustEval({&x}, "shardc.log %a : tensor<13xf32>", {13});
        EXPECT_NEAR(l.data()[at], std::log(v), 1e-5f)
            << "log(" << v << ") at " << at;
      }
    }
  }
}

// exp below the normal range over runs longer than the chunks the fix-up
// compares at once (64 elements): a chunk of one masked value (a causal
// mask's -1e9 shifted by a row's max), a run of it that starts and ends
// inside chunks, a chunk of several values below the range, and -inf, NaN
// and -0 among ordinary elements; every element below the range gets
// std::exp's result (the others, the vector path's, within an ulp or two).
TEST_F(KernelsTest, ExpBelowNormalRangeInRuns) {
  constexpr int64_t n = 300;
  Tensor x = randomIn({n}, "x", -4.0f, 3.0f);
  for (int64_t i = 0; i < 64; ++i)
    x.data()[i] = -1e9f;
  for (int64_t i = 100; i < 190; ++i)
    x.data()[i] = -1e9f - 3.0f * 64;
  for (int64_t i = 192; i < 256; ++i)
    x.data()[i] = -88.0f - float(i % 7);
  x.data()[260] = -INFINITY;
  x.data()[261] = NAN;
  x.data()[262] = -0.0f;
  x.data()[298] = -100.0f;
  Tensor e = mustEval({&x}, "shardc.exp %a : tensor<300xf32>", {n});
  for (int64_t i = 0; i < n; ++i) {
    float v = x.data()[i];
    if (std::isnan(v))
      EXPECT_TRUE(std::isnan(e.data()[i])) << "exp(NaN) at " << i;
    else if (v < -87.33654f)
      EXPECT_EQ(e.data()[i], std::exp(v)) << "exp(" << v << ") at " << i;
    else
      EXPECT_NEAR(e.data()[i], std::exp(v), std::exp(v) * 1e-6f)
          << "exp(" << v << ") at " << i;
  }
}

// A chunk of 64 elements of one value below the normal range is filled
// with std::exp's result without running the vector exp on it; the other
// elements must not notice: each gets the bits it gets when no chunk is
// filled (the same tensor with ordinary values in place of the masked
// chunks), on 1029 elements (a 5-element tail after 16 chunks) with
// masked chunks at the start, in the middle (two in a row) and before the
// tail, and a masked run that fills no chunk whole. The ordinary values
// are ones whose exp Eigen's vector path (AVX2) and glibc's expf round
// differently, so an element computed by the other path shows.
TEST_F(KernelsTest, ExpOfMaskedChunksLeavesTheOtherElementsBits) {
  constexpr int64_t n = 1029;
  const float differing[] = {2.60990429f,  1.68071747f,  2.94309616f,
                             1.38271332f,  -1.04994583f, 2.73719025f,
                             -2.75933075f, -3.14945984f, 2.4391861f,
                             -3.92961121f, -2.4261322f};
  Tensor plain = randomIn({n}, "x");
  for (int64_t i = 0; i < n; ++i)
    plain.data()[i] = differing[i % std::size(differing)];
  Tensor masked = plain.clone();
  auto mask = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      masked.data()[i] = -1e9f;
  };
  mask(0, 64);
  mask(320, 448);
  mask(960, 1024);
  mask(600, 660);
  std::string op = "shardc.exp %a : tensor<1029xf32>";
  Tensor e = mustEval({&masked}, op, {n});
  Tensor reference = mustEval({&plain}, op, {n});
  for (int64_t i = 0; i < n; ++i) {
    if (masked.data()[i] == -1e9f)
      EXPECT_EQ(e.data()[i], std::exp(-1e9f)) << "at " << i;
    else
      EXPECT_EQ(std::memcmp(&e.data()[i], &reference.data()[i], 4), 0)
          << "exp(" << plain.data()[i] << ") at " << i << ": " << e.data()[i]
          << " against " << reference.data()[i];
  }
}

// The documented edges of step: 0 at 0 (either sign) and for NaN, so that
// relu'(0) = 0.
TEST_F(KernelsTest, StepEdges) {
  Tensor x = randomIn({6}, "step");
  const float in[] = {0.0f, -0.0f, std::nanf(""), 1e-30f, -1e-30f, INFINITY};
  const float want[] = {0, 0, 0, 1, 0, 1};
  std::copy(std::begin(in), std::end(in), x.data());
  Tensor r = mustEval({&x}, "shardc.step %a : tensor<6xf32>", {6});
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(r.data()[i], want[i]) << "step(" << in[i] << ")";
}

TEST_F(KernelsTest, BinaryOps) {
  struct BinaryCase {
    const char *op;
    std::function<double(double, double)> ref;
  };
  std::vector<BinaryCase> cases = {
      {"add", [](double a, double b) { return a + b; }},
      {"sub", [](double a, double b) { return a - b; }},
      {"mul", [](double a, double b) { return a * b; }},
      {"div", [](double a, double b) { return a / b; }},
      {"max", [](double a, double b) { return std::max(a, b); }},
  };
  for (const BinaryCase &c : cases) {
    Tensor a = randomIn({3, 4, 5}, "lhs");
    Tensor b = randomIn({3, 4, 5}, "rhs", 0.5f, 2.0f); // away from zero
    for (int64_t i = 0; i < b.numElements(); i += 2)
      b.data()[i] = -b.data()[i];
    Tensor expected = a.clone();
    for (int64_t i = 0; i < a.numElements(); ++i)
      expected.data()[i] = static_cast<float>(c.ref(a.data()[i], b.data()[i]));
    Tensor r = mustEval({&a, &b},
                        std::string("shardc.") + c.op +
                            " %a, %b : " + tensorType({3, 4, 5}),
                        {3, 4, 5});
    expectClose(r, expected, 1e-6f, 0, c.op);
  }
}

//===----------------------------------------------------------------------===//
// Reductions and layout
//===----------------------------------------------------------------------===//

TEST_F(KernelsTest, Reductions) {
  struct ReduceCase {
    SmallVector<int64_t> shape, dims;
  };
  std::vector<ReduceCase> cases = {
      {{3, 4, 5}, {}},        {{3, 4, 5}, {0}},    {{3, 4, 5}, {1}},
      {{3, 4, 5}, {2}},       {{3, 4, 5}, {0, 2}}, {{3, 4, 5}, {1, 2}},
      {{3, 4, 5}, {0, 1, 2}}, {{2, 1, 3, 4}, {1}}, {{2, 1, 3, 4}, {0, 3}},
      {{6, 1, 5}, {2, 0}},    {{300}, {0}},        {{2, 0, 3}, {1}},
  };
  for (const ReduceCase &c : cases) {
    for (bool isMax : {false, true}) {
      Tensor x = randomIn(c.shape, "x");
      Tensor expected = reduceRef(x, c.dims, isMax);
      std::string text =
          std::string("shardc.") + (isMax ? "reduce_max" : "reduce_sum") +
          " %a dims = " + dimList(c.dims) + " : (" + tensorType(c.shape) +
          ") -> " + tensorType(expected.shape());
      Tensor r = mustEval({&x}, text, expected.shape());
      expectClose(r, expected, 1e-5f, 1e-5f, text);
    }
  }
}

// A NaN anywhere in what reduce_max folds makes that result NaN (as
// jnp.max), wherever it sits: the kernel used to ignore it or not depending
// on its position in Eigen's packets and on the shape, so a sharded program
// (other local shapes) and the unsharded one disagreed.
TEST_F(KernelsTest, ReduceMaxPropagatesNaN) {
  struct ReduceCase {
    SmallVector<int64_t> shape, dims;
  };
  std::vector<ReduceCase> cases = {
      {{13}, {0}},    {{3, 13}, {1}}, {{13, 3}, {0}},
      {{2, 9, 5}, {0, 2}}, {{2, 9, 5}, {1}}, {{1}, {0}},
  };
  for (const ReduceCase &c : cases) {
    Tensor clean = randomIn(c.shape, "x");
    for (int64_t at = 0; at < clean.numElements(); ++at) {
      Tensor x = clean.clone();
      x.data()[at] = NAN;
      Tensor expected = reduceRef(clean, c.dims, /*isMax=*/true);
      // The result element `at` folds into.
      Tensor marker = clean.clone();
      for (float &v : marker.values())
        v = 0;
      marker.data()[at] = 1;
      Tensor hit = reduceRef(marker, c.dims, /*isMax=*/true);
      std::string text = "shardc.reduce_max %a dims = " + dimList(c.dims) +
                         " : (" + tensorType(c.shape) + ") -> " +
                         tensorType(expected.shape());
      Tensor r = mustEval({&x}, text, expected.shape());
      for (int64_t i = 0; i < r.numElements(); ++i) {
        if (hit.data()[i] == 1)
          EXPECT_TRUE(std::isnan(r.data()[i]))
              << text << ": NaN at " << at << " lost in result " << i;
        else
          EXPECT_EQ(r.data()[i], expected.data()[i]) << text;
      }
    }
  }
}

TEST_F(KernelsTest, Transposes) {
  SmallVector<SmallVector<int64_t>> perms = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                             {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (auto shape :
       {SmallVector<int64_t>{2, 3, 4}, SmallVector<int64_t>{37, 33, 40},
        SmallVector<int64_t>{1, 5, 1}}) {
    Tensor x = randomIn(shape, "x");
    for (const auto &perm : perms) {
      Tensor expected = transposeRef(x, perm);
      std::string text = "shardc.transpose %a permutation = " + dimList(perm) +
                         " : (" + tensorType(shape) + ") -> " +
                         tensorType(expected.shape());
      Tensor r = mustEval({&x}, text, expected.shape());
      EXPECT_EQ(r.values(), expected.values()) << text;
    }
  }
  Tensor y = randomIn({2, 3, 1, 4}, "y");
  Tensor expected = transposeRef(y, {3, 2, 0, 1});
  Tensor r = mustEval({&y},
                      "shardc.transpose %a permutation = [3, 2, 0, 1] : "
                      "(tensor<2x3x1x4xf32>) -> tensor<4x1x2x3xf32>",
                      {4, 1, 2, 3});
  EXPECT_EQ(r.values(), expected.values());
}

TEST_F(KernelsTest, Reshape) {
  Tensor x = randomIn({3, 4, 5}, "x");
  Tensor r = mustEval(
      {&x}, "shardc.reshape %a : (tensor<3x4x5xf32>) -> tensor<5x12xf32>",
      {5, 12});
  EXPECT_EQ(r.shape(), ArrayRef<int64_t>({5, 12}));
  EXPECT_EQ(r.values(), x.values());
}

TEST_F(KernelsTest, BroadcastInDim) {
  struct BroadcastCase {
    SmallVector<int64_t> in, dims, out;
  };
  std::vector<BroadcastCase> cases = {
      {{4}, {1}, {3, 4}},
      {{3}, {0}, {3, 4}},
      {{3, 1}, {0, 2}, {3, 4, 5}},
      {{1, 4}, {0, 1}, {3, 4}},
      {{}, {}, {2, 3}},
      {{2, 3}, {0, 2}, {2, 5, 3}},
      {{1, 1}, {0, 1}, {2, 2}},
      {{2, 3}, {0, 1}, {2, 3}},
  };
  for (const BroadcastCase &c : cases) {
    Tensor x = randomIn(c.in, "x");
    std::string text = "shardc.broadcast_in_dim %a dims = " + dimList(c.dims) +
                       " : (" + tensorType(c.in) + ") -> " + tensorType(c.out);
    Tensor r = mustEval({&x}, text, c.out);
    EXPECT_EQ(r.values(), broadcastRef(x, c.dims, c.out).values()) << text;
  }
}

TEST_F(KernelsTest, ConstantsAndShardingConstraint) {
  Tensor splat =
      mustEval({}, "shardc.constant dense<0.5> : tensor<2x3xf32>", {2, 3});
  for (float v : splat.values())
    EXPECT_EQ(v, 0.5f);
  Tensor values = mustEval(
      {}, "shardc.constant dense<[[1.0, 2.0], [3.0, -4.5]]> : tensor<2x2xf32>",
      {2, 2});
  EXPECT_EQ(values.values(), ArrayRef<float>({1, 2, 3, -4.5f}));
  Tensor x = randomIn({4, 2}, "x");
  Tensor c = mustEval({&x},
                      "shardc.sharding_constraint %a <@mesh, [{\"x\"}, {}]> : "
                      "tensor<4x2xf32>",
                      {4, 2});
  EXPECT_EQ(c.values(), x.values());
}

} // namespace

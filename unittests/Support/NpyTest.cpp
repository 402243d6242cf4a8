//===- NpyTest.cpp - .npy reading and writing -----------------------------===//

#include "shardc/Support/Npy.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>

using namespace shardc;

namespace {

/// A .npy file assembled by hand: version, dict text and raw data.
std::string makeNpy(int major, llvm::StringRef dict, llvm::StringRef data) {
  std::string header = dict.str();
  size_t prefix = major == 1 ? 10 : 12;
  header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
  header.push_back('\n');
  std::string out("\x93NUMPY", 6);
  out.push_back(static_cast<char>(major));
  out.push_back(0);
  uint32_t len = header.size();
  for (size_t i = 0; i < prefix - 8; ++i)
    out.push_back(static_cast<char>((len >> (8 * i)) & 0xff));
  return out + header + data.str();
}

template <typename T> std::string rawData(std::initializer_list<T> values) {
  std::string out(values.size() * sizeof(T), '\0');
  std::memcpy(out.data(), values.begin(), out.size());
  return out;
}

std::string f4Dict(llvm::StringRef shape, bool fortran = false) {
  return (llvm::Twine("{'descr': '<f4', 'fortran_order': ") +
          (fortran ? "True" : "False") + ", 'shape': " + shape + ", }")
      .str();
}

/// The error message of parsing `bytes`, or "" if it parsed.
std::string parseError(llvm::StringRef bytes, uint64_t maxBytes = 1 << 20) {
  llvm::Expected<Tensor> t = parseNpy(bytes, "bad.npy", maxBytes);
  if (t)
    return "";
  return llvm::toString(t.takeError());
}

Tensor iota(llvm::ArrayRef<int64_t> shape) {
  Tensor t = llvm::cantFail(Tensor::allocate(shape));
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.data()[i] = static_cast<float>(i) * 0.5f - 3.0f;
  return t;
}

TEST(NpyTest, InMemoryRoundTrip) {
  for (auto shape :
       {llvm::SmallVector<int64_t>{16, 64}, llvm::SmallVector<int64_t>{5},
        llvm::SmallVector<int64_t>{}, llvm::SmallVector<int64_t>{2, 0, 3},
        llvm::SmallVector<int64_t>{2, 3, 4, 5}}) {
    Tensor t = iota(shape);
    std::string bytes = serializeNpy(t);
    // NumPy aligns the data to 64 bytes; so do we.
    EXPECT_EQ((bytes.size() - t.byteSize()) % 64, 0u);
    Tensor back = llvm::cantFail(parseNpy(bytes));
    EXPECT_EQ(back.shape(), t.shape());
    EXPECT_EQ(back.values(), t.values());
  }
}

TEST(NpyTest, HeaderSpellsShapesLikeNumPy) {
  EXPECT_NE(serializeNpy(iota({5})).find("'shape': (5,)"), std::string::npos);
  EXPECT_NE(serializeNpy(iota({})).find("'shape': ()"), std::string::npos);
  EXPECT_NE(serializeNpy(iota({16, 64})).find("'shape': (16, 64)"),
            std::string::npos);
}

TEST(NpyTest, FileRoundTripAndMissingFile) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("shardc-npy", dir));
  llvm::SmallString<128> path(dir);
  llvm::sys::path::append(path, "t.npy");
  Tensor t = iota({3, 7});
  ASSERT_FALSE(writeNpy(path, t));
  Tensor back = llvm::cantFail(readNpy(path));
  EXPECT_EQ(back.values(), t.values());

  llvm::SmallString<128> missing(dir);
  llvm::sys::path::append(missing, "missing.npy");
  llvm::Expected<Tensor> none = readNpy(missing);
  ASSERT_FALSE(none);
  EXPECT_NE(llvm::toString(none.takeError()).find("missing.npy"),
            std::string::npos);
  llvm::SmallString<128> unwritable(dir);
  llvm::sys::path::append(unwritable, "no-such-dir", "x.npy");
  llvm::Error err = writeNpy(unwritable, t);
  ASSERT_TRUE(static_cast<bool>(err));
  EXPECT_NE(llvm::toString(std::move(err)).find("no-such-dir"),
            std::string::npos);
  llvm::sys::fs::remove_directories(dir);
}

TEST(NpyTest, HandBuiltFiles) {
  // Version 1.0, f8, converted to f32.
  Tensor a = llvm::cantFail(parseNpy(
      makeNpy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }",
              rawData<double>({1.5, -2, 3.25, 1e300}))));
  EXPECT_EQ(a.shape(), llvm::ArrayRef<int64_t>({2, 2}));
  EXPECT_EQ(a.at({1, 0}), 3.25f);
  EXPECT_TRUE(std::isinf(a.at({1, 1})));
  // Versions 2.0 and 3.0, odd spacing, double quotes, key order, Python 2
  // longs.
  Tensor b = llvm::cantFail(parseNpy(
      makeNpy(2, "{ \"shape\" :(3L,) ,'fortran_order':False,'descr':'<f4'}",
              rawData<float>({1, 2, 3}))));
  EXPECT_EQ(b.values(), llvm::ArrayRef<float>({1, 2, 3}));
  Tensor c =
      llvm::cantFail(parseNpy(makeNpy(3, f4Dict("()"), rawData<float>({7}))));
  EXPECT_EQ(c.rank(), 0);
  EXPECT_EQ(c.at({}), 7.0f);
  // Fortran order: column-major data is transposed into row-major.
  Tensor f =
      llvm::cantFail(parseNpy(makeNpy(1, f4Dict("(2, 3)", /*fortran=*/true),
                                      rawData<float>({0, 3, 1, 4, 2, 5}))));
  EXPECT_EQ(f.values(), llvm::ArrayRef<float>({0, 1, 2, 3, 4, 5}));
  Tensor g = llvm::cantFail(parseNpy(makeNpy(
      1, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 2, 2), }",
      rawData<double>({0, 4, 2, 6, 1, 5, 3, 7}))));
  EXPECT_EQ(g.values(), llvm::ArrayRef<float>({0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(NpyTest, MalformedFilesAreRefused) {
  std::string four = rawData<float>({1, 2, 3, 4});
  std::string good = makeNpy(1, f4Dict("(2, 2)"), four);
  ASSERT_EQ(parseError(good), "");

  struct Case {
    const char *what;
    std::string bytes;
    const char *expected;
  };
  std::string versionFour = good;
  versionFour[6] = 4;
  std::string longHeader = good;
  longHeader[8] = '\xff';
  longHeader[9] = '\x7f';
  std::vector<Case> cases = {
      {"empty", "", "not a .npy file"},
      {"garbage", "hello world, not numpy at all", "not a .npy file"},
      {"magic only", std::string("\x93NUMPY", 6), "not a .npy file"},
      {"version", versionFour, "unsupported .npy format version 4.0"},
      {"v2 prefix cut", good.substr(0, 10).replace(6, 1, "\x02"), "truncated"},
      {"header past end", longHeader, "truncated file"},
      {"truncated header", good.substr(0, 40), "truncated file"},
      {"not a dict", makeNpy(1, "[1, 2]", four), "expected '{'"},
      {"missing key", makeNpy(1, "{'descr': '<f4', 'shape': (2, 2), }", four),
       "lacks"},
      {"unknown key",
       makeNpy(1,
               "{'descr': '<f4', 'fortran_order': False, "
               "'shape': (2, 2), 'extra': 1}",
               four),
       "unexpected key 'extra'"},
      {"duplicate key", makeNpy(1, "{'descr': '<f4', 'descr': '<f4', }", four),
       "duplicate key 'descr'"},
      {"unsigned int dtype",
       makeNpy(1, "{'descr': '<u4', 'fortran_order': False, 'shape': (4,)}",
               four),
       "unsupported dtype '<u4'"},
      {"big endian",
       makeNpy(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (4,)}",
               four),
       "unsupported dtype '>f4'"},
      {"u1",
       makeNpy(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (4,)}",
               four),
       "unsupported dtype '|u1'"},
      {"structured",
       makeNpy(1,
               "{'descr': [('a', '<f4')], 'fortran_order': False, "
               "'shape': (4,)}",
               four),
       "structured dtypes"},
      {"order not bool",
       makeNpy(1, "{'descr': '<f4', 'fortran_order': 0, 'shape': (4,)}", four),
       "True or False"},
      {"negative dim", makeNpy(1, f4Dict("(-4,)"), four), "non-negative"},
      {"float dim", makeNpy(1, f4Dict("(4.0,)"), four), "expected ','"},
      {"shape not tuple", makeNpy(1, f4Dict("[4]"), four), "expected '('"},
      {"int in parens", makeNpy(1, f4Dict("(4)"), four), "'(n,)'"},
      {"unterminated", makeNpy(1, "{'descr: '<f4'}", four), "expected ':'"},
      {"trailing text", makeNpy(1, f4Dict("(4,)") + " x", four),
       "unexpected text"},
      {"truncated data", makeNpy(1, f4Dict("(2, 2)"), four.substr(0, 12)),
       "needs 16 bytes but the file has 12 (truncated file)"},
      {"extra data", makeNpy(1, f4Dict("(2, 2)"), four + "xx"),
       "data size mismatch"},
      {"overflowing shape",
       makeNpy(1, f4Dict("(4611686018427387904, 4)"), four), "overflows"},
      {"dim over 64 bits", makeNpy(1, f4Dict("(99999999999999999999,)"), four),
       "64 bits"},
      // A shape that fits in 64 bits but not in the file is refused before
      // anything is allocated.
      {"huge shape", makeNpy(1, f4Dict("(1099511627776, 1024)"), four),
       "needs 4503599627370496 bytes but the file has 16"},
  };
  for (const Case &c : cases) {
    std::string msg = parseError(c.bytes);
    EXPECT_NE(msg, "") << c.what;
    EXPECT_NE(msg.find(c.expected), std::string::npos) << c.what << ": " << msg;
    EXPECT_EQ(msg.rfind("bad.npy: ", 0), 0u) << c.what << ": " << msg;
  }
  // Well-formed but over the caller's budget.
  std::string msg = parseError(good, /*maxBytes=*/8);
  EXPECT_NE(msg.find("more than the limit of 8 bytes"), std::string::npos)
      << msg;
}

/// A python3 that can import numpy, or "".
std::string findNumPyPython() {
  std::vector<std::string> candidates;
  if (const char *env = std::getenv("SHARDC_PYTHON"))
    candidates.push_back(env);
  candidates.push_back("python3");
  candidates.push_back("/usr/bin/python3");
  for (const std::string &py : candidates) {
    std::string cmd = py + " -c 'import numpy' >/dev/null 2>&1";
    if (std::system(cmd.c_str()) == 0)
      return py;
  }
  return "";
}

TEST(NpyTest, TypedRoundTripsKeepDTypeAndValues) {
  Tensor i32 = llvm::cantFail(
      Tensor::fromValuesAs<int32_t>({2, 3}, {0, -1, 7, 1 << 30, -(1 << 30), 5}));
  Tensor i64 = llvm::cantFail(Tensor::fromValuesAs<int64_t>(
      {3}, {int64_t(1) << 60, -3, std::numeric_limits<int64_t>::min()}));
  Tensor i1 = llvm::cantFail(Tensor::fromValuesAs<uint8_t>({2, 2}, {1, 0, 0, 1}));
  for (const Tensor *t : {&i32, &i64, &i1}) {
    std::string bytes = serializeNpy(*t);
    llvm::Expected<Tensor> back = parseNpy(bytes);
    ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
    EXPECT_EQ(back->dtype(), t->dtype());
    EXPECT_EQ(back->shape(), t->shape());
    EXPECT_EQ(back->byteSize(), t->byteSize());
    EXPECT_EQ(std::memcmp(back->rawData(), t->rawData(), t->byteSize()), 0)
        << dtypeName(t->dtype()).str();
  }
  EXPECT_NE(serializeNpy(i32).find("'descr': '<i4'"), std::string::npos);
  EXPECT_NE(serializeNpy(i64).find("'descr': '<i8'"), std::string::npos);
  EXPECT_NE(serializeNpy(i1).find("'descr': '|b1'"), std::string::npos);
}

TEST(NpyTest, MalformedTypedFilesAreRefused) {
  auto error = [](const std::string &bytes) {
    llvm::Expected<Tensor> t = parseNpy(bytes, "f.npy");
    EXPECT_FALSE(t);
    return t ? std::string() : llvm::toString(t.takeError());
  };
  // 3 elements of <i8 need 24 bytes.
  EXPECT_NE(error(makeNpy(1,
                          "{'descr': '<i8', 'fortran_order': False, "
                          "'shape': (3,), }",
                          rawData<int64_t>({1, 2})))
                .find("needs 24 bytes but the file has 16"),
            std::string::npos);
  // A shape whose <i8 byte size overflows.
  EXPECT_NE(error(makeNpy(1,
                          "{'descr': '<i8', 'fortran_order': False, "
                          "'shape': (4611686018427387904, 4), }",
                          ""))
                .find("overflows"),
            std::string::npos);
  // A boolean byte that is neither 0 nor 1.
  EXPECT_NE(error(makeNpy(1,
                          "{'descr': '|b1', 'fortran_order': False, "
                          "'shape': (2,), }",
                          std::string("\x01\x07", 2)))
                .find("not a boolean"),
            std::string::npos);
  // Big-endian and unsigned integers are not read.
  EXPECT_NE(error(makeNpy(1,
                          "{'descr': '>i4', 'fortran_order': False, "
                          "'shape': (1,), }",
                          rawData<int32_t>({1})))
                .find("unsupported dtype '>i4'"),
            std::string::npos);
}

TEST(NpyTest, InteroperatesWithNumPy) {
  std::string py = findNumPyPython();
  if (py.empty())
    GTEST_SKIP() << "no python3 with numpy";
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("shardc-npy-numpy", dir));
  std::string d(dir.str());

  // Files NumPy writes: every layout and version we claim to read. Values
  // are arange(n) * 0.5 - 3, in the logical (row-major) order.
  std::string write =
      "import numpy as np, sys\n"
      "d = sys.argv[1]\n"
      "def v(shape, dt): return (np.arange(int(np.prod(shape))) * 0.5 - 3)"
      ".reshape(shape).astype(dt)\n"
      "np.save(d + '/f4.npy', v((16, 64), np.float32))\n"
      "np.save(d + '/f8.npy', v((3, 5), np.float64))\n"
      "np.save(d + '/vec.npy', v((5,), np.float32))\n"
      "np.save(d + '/scalar.npy', v((), np.float32))\n"
      "np.save(d + '/fortran.npy', np.asfortranarray(v((4, 3, 2), "
      "np.float32)))\n"
      "with open(d + '/v2.npy', 'wb') as f:\n"
      "  np.lib.format.write_array(f, v((2, 3), np.float32), version=(2, 0))\n"
      "np.save(d + '/int.npy', np.arange(4, dtype=np.int32))\n"
      "np.save(d + '/i8.npy', np.array([[-5, 1 << 40], [7, 0]], np.int64))\n"
      "np.save(d + '/b1.npy', np.array([True, False, True]))\n"
      "np.save(d + '/i8f.npy', np.asfortranarray("
      "np.arange(6, dtype=np.int64).reshape(2, 3)))\n"
      "np.save(d + '/u2.npy', np.arange(3, dtype=np.uint16))\n";
  std::string script = d + "/write.py";
  std::ofstream(script) << write;
  ASSERT_EQ(std::system((py + " " + script + " " + d).c_str()), 0);

  auto check = [&](const char *file, llvm::ArrayRef<int64_t> shape) {
    llvm::Expected<Tensor> t = readNpy(d + "/" + file);
    ASSERT_TRUE(static_cast<bool>(t))
        << file << ": " << llvm::toString(t.takeError());
    EXPECT_EQ(t->shape(), shape) << file;
    Tensor expected = iota(shape);
    EXPECT_EQ(t->values(), expected.values()) << file;
  };
  check("f4.npy", {16, 64});
  check("f8.npy", {3, 5});
  check("vec.npy", {5});
  check("scalar.npy", {});
  check("fortran.npy", {4, 3, 2});
  check("v2.npy", {2, 3});
  llvm::Expected<Tensor> ints = readNpy(d + "/int.npy");
  ASSERT_TRUE(static_cast<bool>(ints)) << llvm::toString(ints.takeError());
  EXPECT_EQ(ints->dtype(), DType::I32);
  EXPECT_EQ(ints->valuesAs<int32_t>(), llvm::ArrayRef<int32_t>({0, 1, 2, 3}));

  llvm::Expected<Tensor> i8 = readNpy(d + "/i8.npy");
  ASSERT_TRUE(static_cast<bool>(i8)) << llvm::toString(i8.takeError());
  EXPECT_EQ(i8->dtype(), DType::I64);
  EXPECT_EQ(i8->valuesAs<int64_t>(),
            llvm::ArrayRef<int64_t>({-5, int64_t(1) << 40, 7, 0}));
  llvm::Expected<Tensor> b1 = readNpy(d + "/b1.npy");
  ASSERT_TRUE(static_cast<bool>(b1)) << llvm::toString(b1.takeError());
  EXPECT_EQ(b1->dtype(), DType::I1);
  EXPECT_EQ(b1->valuesAs<uint8_t>(), llvm::ArrayRef<uint8_t>({1, 0, 1}));
  llvm::Expected<Tensor> i8f = readNpy(d + "/i8f.npy");
  ASSERT_TRUE(static_cast<bool>(i8f)) << llvm::toString(i8f.takeError());
  EXPECT_EQ(i8f->valuesAs<int64_t>(),
            llvm::ArrayRef<int64_t>({0, 1, 2, 3, 4, 5}));
  llvm::Expected<Tensor> u2 = readNpy(d + "/u2.npy");
  ASSERT_FALSE(u2);
  EXPECT_NE(llvm::toString(u2.takeError()).find("'<u2'"), std::string::npos);

  // Typed files we write, read back by NumPy.
  ASSERT_FALSE(writeNpy(
      d + "/ours_i4.npy",
      llvm::cantFail(Tensor::fromValuesAs<int32_t>({2, 2}, {-1, 2, 3, 1 << 30}))));
  ASSERT_FALSE(writeNpy(
      d + "/ours_i8.npy",
      llvm::cantFail(Tensor::fromValuesAs<int64_t>({2}, {-(int64_t(1) << 50), 9}))));
  ASSERT_FALSE(writeNpy(
      d + "/ours_b1.npy",
      llvm::cantFail(Tensor::fromValuesAs<uint8_t>({3}, {0, 1, 1}))));
  std::string readTyped =
      "import numpy as np, sys\n"
      "d = sys.argv[1]\n"
      "a = np.load(d + '/ours_i4.npy')\n"
      "assert a.dtype == np.int32 and (a == [[-1, 2], [3, 1 << 30]]).all()\n"
      "b = np.load(d + '/ours_i8.npy')\n"
      "assert b.dtype == np.int64 and (b == [-(1 << 50), 9]).all()\n"
      "c = np.load(d + '/ours_b1.npy')\n"
      "assert c.dtype == np.bool_ and (c == [False, True, True]).all()\n";
  std::string script3 = d + "/read_typed.py";
  std::ofstream(script3) << readTyped;
  EXPECT_EQ(std::system((py + " " + script3 + " " + d).c_str()), 0);

  // Files we write, read back by NumPy.
  ASSERT_FALSE(writeNpy(d + "/ours.npy", iota({7, 3, 2})));
  ASSERT_FALSE(writeNpy(d + "/ours_scalar.npy", iota({})));
  std::string read =
      "import numpy as np, sys\n"
      "d = sys.argv[1]\n"
      "a = np.load(d + '/ours.npy')\n"
      "assert a.dtype == np.float32 and a.shape == (7, 3, 2), a.shape\n"
      "assert (a.ravel() == np.arange(42) * 0.5 - 3).all()\n"
      "s = np.load(d + '/ours_scalar.npy')\n"
      "assert s.shape == () and s == -3\n";
  std::string script2 = d + "/read.py";
  std::ofstream(script2) << read;
  EXPECT_EQ(std::system((py + " " + script2 + " " + d).c_str()), 0);
  llvm::sys::fs::remove_directories(dir);
}

} // namespace

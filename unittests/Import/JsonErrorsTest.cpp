//===- JsonErrorsTest.cpp - every import error is a located diagnostic ----===//
//
// Each test feeds one malformed graph and checks that import fails with an
// error naming the problem, located in the file (and at the entry's line
// and column where the test gives them). `graph()` puts the inputs on line
// 2, the ops on line 3 and the outputs on line 4.
//
//===----------------------------------------------------------------------===//

#include "JsonTestUtils.h"

#include "llvm/ADT/StringExtras.h"

using namespace shardc::test;

namespace {

const char *const kInputA = R"({"name": "a", "shape": [8, 4]})";
const char *const kReluA = R"({"op": "relu", "inputs": ["a"], "output": "b"})";

std::string withInput(llvm::StringRef input) {
  return graph(input, "", R"({"name": "a"})");
}

std::string withOps(llvm::StringRef ops, llvm::StringRef output = "b") {
  return graph(kInputA, ops, R"({"name": ")" + output.str() + R"("})");
}

std::string withMesh(llvm::StringRef mesh) {
  return (R"({"mesh": )" + mesh + R"(, "inputs": [], "ops": [],
   "outputs": [{"name": "a"}]})")
      .str();
}

//===----------------------------------------------------------------------===//
// Text
//===----------------------------------------------------------------------===//

TEST(JsonErrors, MalformedJson) {
  EXPECT_TRUE(importFails("{\"mesh\": }", "invalid JSON", 1, 10));
  EXPECT_TRUE(importFails("{\n  \"mesh\": [1, 2,]\n}", "invalid JSON", 2, 17));
  EXPECT_TRUE(importFails(R"({"mesh": {"name": "m"}})"
                          "\n  x",
                          "invalid JSON", 2, 3));
  EXPECT_TRUE(importFails("{\"a\": \"unterminated", "invalid JSON"));
  EXPECT_TRUE(importFails("{\"a\": tru}", "invalid literal"));
  EXPECT_TRUE(importFails("{\"a\": 1} // comment", "invalid JSON"));
  EXPECT_TRUE(importFails(withInput(R"({"name": "a", "shape": [1e400]})"),
                          "invalid JSON: number overflow parsing '1e400'"));
}

TEST(JsonErrors, EmptyFile) {
  EXPECT_TRUE(importFails("", "empty", 1, 1));
  EXPECT_TRUE(importFails(" \n\t \r\n", "empty"));
  EXPECT_TRUE(importFails("\xEF\xBB\xBF", "empty"));
}

TEST(JsonErrors, BinaryGarbage) {
  std::string elf("\x7f"
                  "ELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x03\0>\0",
                  20);
  EXPECT_TRUE(importFails(elf, "invalid JSON", 1, 1));
  EXPECT_TRUE(importFails(std::string("\0\0\0", 3), "invalid JSON"));
  // Garbage is shown escaped, valid UTF-8 as it is.
  EXPECT_TRUE(importFails("\x01", "last read: '<U+0001>'"));
  EXPECT_TRUE(importFails("\xfe", "last read: '\\xfe'"));
  EXPECT_TRUE(importFails(
      withOps(R"({"op": "relu", "inputs": ["größe"], "output": "b"})"),
      "names no input or op output \"größe\""));
  // Invalid UTF-8 inside a string, with control bytes in the message made
  // printable.
  EXPECT_TRUE(importFails("{\"mesh\": \"\xff\xfe\x01\"}", "invalid JSON"));
}

TEST(JsonErrors, NestingTooDeep) {
  EXPECT_TRUE(importFails(std::string(65, '['), "deeper than 64", 1, 65));
  std::string ok = std::string(64, '[') + std::string(64, ']');
  // 64 levels parse (and then fail as a non-object graph).
  EXPECT_TRUE(importFails(ok, "must be an object"));
  // Brackets inside strings do not count.
  EXPECT_TRUE(importFails("{\"k\": \"" + std::string(200, '[') + "\"}",
                          "unknown field \"k\""));
  // A million brackets are rejected quickly and without recursion.
  EXPECT_TRUE(importFails(std::string(1000000, '{'), "deeper than 64"));
}

TEST(JsonErrors, DuplicateJsonKey) {
  EXPECT_TRUE(importFails(graph(R"({"name": "a", "shape": [8], "shape": [4]})",
                                "", R"({"name": "a"})"),
                          "field \"shape\" appears twice", 2, 41));
}

//===----------------------------------------------------------------------===//
// Structure
//===----------------------------------------------------------------------===//

TEST(JsonErrors, TopLevel) {
  EXPECT_TRUE(importFails("[1, 2, 3]", "must be an object", 1, 1));
  EXPECT_TRUE(importFails("\"graph\"", "must be an object"));
  EXPECT_TRUE(importFails(R"({"inputs": [], "ops": [], "outputs": []})",
                          "missing required field \"mesh\"", 1, 1));
  EXPECT_TRUE(
      importFails(graph(kInputA, "", R"({"name": "a"})", R"(, "optputs": [])"),
                  "unknown field \"optputs\" (did you mean "
                  "\"outputs\"?)",
                  4, 30));
  EXPECT_TRUE(
      importFails(graph(kInputA, "", R"({"name": "a"})", R"(, "spmd": "yes")"),
                  "spmd: must be true or false"));
  EXPECT_TRUE(
      importFails(graph(kInputA, "", ""), "outputs: must be a non-empty"));
  EXPECT_TRUE(importFails(R"({"mesh": {"name": "m", "axes": [["x", 2]]},
    "inputs": {"a": 1}, "ops": [], "outputs": []})",
                          "inputs: must be a list", 2, 15));
}

TEST(JsonErrors, Mesh) {
  EXPECT_TRUE(importFails(withMesh(R"({"name": "m", "axes": [["x", 2.5]]})"),
                          "mesh.axes[0][1]: must be an integer, got the "
                          "number 2.5",
                          1, 39));
  EXPECT_TRUE(importFails(withMesh(R"({"name": "m", "axes": [["x", "2"]]})"),
                          "must be an integer, got the string \"2\""));
  EXPECT_TRUE(importFails(withMesh(R"({"name": "m", "axes": [["x", 0]]})"),
                          "axis \"x\" has size 0; sizes must be at least 1"));
  EXPECT_TRUE(importFails(withMesh(R"({"name": "m", "axes": [["x", -2]]})"),
                          "has size -2"));
  EXPECT_TRUE(importFails(
      withMesh(R"({"name": "m", "axes": [["x", 99999999999999999999999]]})"),
      "does not fit in 64 bits"));
  EXPECT_TRUE(importFails(
      withMesh(R"({"name": "m", "axes": [["x", 18446744073709551615]]})"),
      "does not fit in 64 bits"));
  EXPECT_TRUE(importFails(
      withMesh(R"({"name": "m", "axes": [["x", 2048], ["y", 1024]]})"),
      "more than 2^20 devices"));
  EXPECT_TRUE(
      importFails(withMesh(R"({"name": "m", "axes": [["x", 2], ["x", 4]]})"),
                  "axis \"x\" is declared twice", 1, 44));
  EXPECT_TRUE(importFails(withMesh(R"({"name": "m", "axes": []})"),
                          "non-empty list of [name, size] pairs"));
  EXPECT_TRUE(importFails(withMesh(R"({"name": "m", "axes": [["x"]]})"),
                          "must be a [name, size] pair"));
  EXPECT_TRUE(importFails(withMesh(R"({"name": "", "axes": [["x", 2]]})"),
                          "mesh.name: must be a non-empty name"));
  EXPECT_TRUE(importFails(withMesh(R"({"axes": [["x", 2]]})"),
                          "mesh: missing required field \"name\""));
}

TEST(JsonErrors, Inputs) {
  EXPECT_TRUE(importFails(withInput(R"({"name": "a", "shape": "4x4"})"),
                          "inputs[0] (name \"a\").shape: must be a list of "
                          "dimension sizes, got the string \"4x4\"",
                          2, 36));
  EXPECT_TRUE(importFails(withInput(R"({"name": "a", "shape": [4.5, 4]})"),
                          "shape[0]: must be an integer", 2, 37));
  EXPECT_TRUE(importFails(withInput(R"({"name": "a", "shape": [-4, 4]})"),
                          "dimension size -4 is negative"));
  EXPECT_TRUE(importFails(
      withInput(R"({"name": "a", "shape": [4611686018427387904, 4]})"),
      "shape [4611686018427387904, 4] has more elements than fit in 64 bits"));
  EXPECT_TRUE(importFails(
      withInput(R"({"name": "a", "shape": [99999999999999999999999, 4]})"),
      "does not fit in 64 bits"));
  EXPECT_TRUE(importFails(
      withInput(R"({"name": "a", "shape": [4, 4], "dtype": "f33"})"),
      "unknown dtype \"f33\"", 2, 53));
  EXPECT_TRUE(importFails(
      withInput(R"({"name": "a", "shape": [4, 4], "dtype": "u32"})"),
      "expected one of \"f32\", \"i1\", \"i32\", \"i64\", \"f16\", "
      "\"bf16\", \"f64\""));
  EXPECT_TRUE(importFails(withInput(R"({"shape": [4, 4]})"),
                          "inputs[0]: missing required field \"name\"", 2, 13));
  EXPECT_TRUE(importFails(withInput(R"({"name": "a"})"),
                          "inputs[0] (name \"a\"): missing required field "
                          "\"shape\""));
  EXPECT_TRUE(importFails(withInput(R"({"name": 3, "shape": []})"),
                          "name: must be a string, got the integer 3"));
  EXPECT_TRUE(
      importFails(withInput(R"([4, 4])"), "inputs[0]: must be an object"));
  EXPECT_TRUE(
      importFails(withInput(R"({"name": "a", "shape": [], "shardng": []})"),
                  "unknown field \"shardng\" (did you mean "
                  "\"sharding\"?)"));
  EXPECT_TRUE(importFails(
      graph(R"({"name": "a", "shape": [4]}, {"name": "a", "shape": [4]})", "",
            R"({"name": "a"})"),
      "inputs[1] (name \"a\"): value \"a\" is already defined by inputs[0] "
      "(name \"a\")",
      2, 42));
}

TEST(JsonErrors, Shardings) {
  EXPECT_TRUE(importFails(
      withInput(R"({"name": "a", "shape": [8, 4], "sharding": ["z", null]})"),
      "unknown mesh axis \"z\" (mesh \"mesh\" has axes [\"y\", \"x\"])", 2,
      57));
  EXPECT_TRUE(importFails(
      withInput(R"({"name": "a", "shape": [8, 4], "sharding": ["x", "x"]})"),
      "mesh axis \"x\" is used twice in one sharding"));
  EXPECT_TRUE(
      importFails(withInput(R"({"name": "a", "shape": [8, 4], "sharding": ["x"],
                    "partial": ["x"]})"),
                  "mesh axis \"x\" is used twice in one sharding"));
  EXPECT_TRUE(importFails(
      withInput(R"({"name": "a", "shape": [8, 4], "sharding": ["x"]})"),
      "sharding of input \"a\" has 1 dim entries but 'tensor<8x4xf32>' has "
      "rank 2",
      2, 56));
  // A dim its axes do not divide is padded (docs/sharding.md#uneven-dims),
  // not an error.
  auto ctx = makeContext();
  EXPECT_TRUE(importJson(*ctx, withInput(R"({"name": "a", "shape": [6, 4],
                                             "sharding": ["y", "x"]})"))
                  .module);
  EXPECT_TRUE(importFails(
      withInput(R"({"name": "a", "shape": [8, 4], "sharding": "y"})"),
      "must be a list with one entry per dimension"));
  EXPECT_TRUE(importFails(
      withInput(R"({"name": "a", "shape": [8, 4], "sharding": [1, null]})"),
      "sharding[0]: must be null (replicated), a mesh axis name or a list"));
  EXPECT_TRUE(importFails(
      withInput(R"({"name": "a", "shape": [8, 4], "partial": ["x"]})"),
      "partial: needs a \"sharding\""));
  EXPECT_TRUE(importFails(
      graph(kInputA, kReluA, R"({"name": "b", "sharding": [["y", "x"], "x"]})"),
      "outputs[0] (name \"b\").sharding[1]: mesh axis \"x\" is used twice"));
  EXPECT_TRUE(importJson(*ctx, withOps(R"({"op": "relu", "inputs": ["a"],
                                          "output": "b",
                                          "sharding": [null, ["y", "x"]]})"))
                  .module);
}

TEST(JsonErrors, OpStructure) {
  EXPECT_TRUE(importFails(
      withOps(R"({"op": "matmull", "inputs": ["a", "a"], "output": "b"})"),
      "unknown op \"matmull\" (did you mean \"matmul\"?)", 3, 17));
  EXPECT_TRUE(importFails(
      withOps(R"({"op": "matmul", "inputs": ["a"], "output": "b"})"),
      "ops[0] (output \"b\").inputs: \"matmul\" takes 2 inputs, got 1", 3, 37));
  EXPECT_TRUE(importFails(
      withOps(R"({"op": "constant", "inputs": ["a"], "output": "b", "shape": [],
                  "value": 1})"),
      "\"constant\" takes no inputs, got 1"));
  EXPECT_TRUE(importFails(withOps(R"({"op": "relu", "output": "b"})"),
                          "missing required field \"inputs\""));
  EXPECT_TRUE(importFails(withOps(R"({"op": "relu", "inputs": ["a"]})"),
                          "ops[0]: missing required field \"output\"", 3, 10));
  EXPECT_TRUE(importFails(withOps(R"({"inputs": ["a"], "output": "b"})"),
                          "missing required field \"op\""));
  EXPECT_TRUE(importFails(withOps(R"({"op": "relu", "inputs": "a",
                                      "output": "b"})"),
                          "inputs: must be a list of names"));
  EXPECT_TRUE(importFails(
      withOps(R"({"op": "reduce_sum", "inputs": ["a"], "output": "b",
                  "dimz": [0]})"),
      "unknown field \"dimz\" (did you mean \"dims\"?)"));
  EXPECT_TRUE(importFails(
      withOps(R"({"op": "reduce_sum", "inputs": ["a"], "output": "b"})"),
      "ops[0] (output \"b\"): missing required field \"dims\""));
  EXPECT_TRUE(importFails(
      withOps(R"({"op": "relu", "inputs": ["a"], "output": "b", "dims": [0]})"),
      "unknown field \"dims\""));
  EXPECT_TRUE(importFails(withOps(R"("relu")"), "ops[0]: must be an object"));
  EXPECT_TRUE(importFails(R"({"mesh": {"name": "m", "axes": [["x", 2]]},
    "inputs": [], "ops": {}, "outputs": [{"name": "a"}]})",
                          "ops: must be a list of op objects", 2, 26));
}

TEST(JsonErrors, ValueNames) {
  EXPECT_TRUE(importFails(
      withOps(R"({"op": "add", "inputs": ["a", "nothere"], "output": "b"})"),
      "ops[0] (output \"b\").inputs[1]: names no input or op output "
      "\"nothere\"",
      3, 40));
  EXPECT_TRUE(
      importFails(withOps(R"({"op": "relu", "inputs": ["aa"], "output": "b"})"),
                  "(did you mean \"a\"?)"));
  EXPECT_TRUE(importFails(
      withOps(R"({"op": "relu", "inputs": ["a"], "output": "b"},
                 {"op": "neg", "inputs": ["a"], "output": "b"})"),
      "ops[1] (output \"b\"): value \"b\" is already defined by ops[0] "
      "(output \"b\")"));
  EXPECT_TRUE(
      importFails(withOps(R"({"op": "relu", "inputs": ["a"], "output": "a"})"),
                  "already defined by inputs[0] (name \"a\")"));
  EXPECT_TRUE(importFails(withOps(kReluA, "zz"),
                          "outputs[0] (name \"zz\").name: names no input or op "
                          "output \"zz\"",
                          4, 23));
  EXPECT_TRUE(importFails(withOps(kReluA, ""), "must be a non-empty name"));
}

TEST(JsonErrors, Cycles) {
  EXPECT_TRUE(importFails(
      withOps(R"({"op": "add", "inputs": ["a", "c"], "output": "b"},
                 {"op": "relu", "inputs": ["b"], "output": "c"})"),
      "ops[0] (output \"b\"): ops form a cycle: \"b\" -> \"c\" -> \"b\"", 3,
      10));
  EXPECT_TRUE(
      importFails(withOps(R"({"op": "relu", "inputs": ["b"], "output": "b"})"),
                  "ops form a cycle: \"b\" -> \"b\""));
  // A cycle downstream of a valid op names only the ops on the cycle.
  EXPECT_TRUE(importFails(
      withOps(R"({"op": "relu", "inputs": ["a"], "output": "b"},
                 {"op": "add", "inputs": ["b", "e"], "output": "c"},
                 {"op": "neg", "inputs": ["c"], "output": "d"},
                 {"op": "exp", "inputs": ["d"], "output": "e"})",
              "e"),
      "ops[1] (output \"c\"): ops form a cycle: \"c\" -> \"d\" -> \"e\" -> "
      "\"c\"",
      4, 18));
}

//===----------------------------------------------------------------------===//
// Types, shapes and attributes
//===----------------------------------------------------------------------===//

TEST(JsonErrors, ShapeMismatches) {
  std::string two =
      R"({"name": "a", "shape": [4, 8]}, {"name": "b", "shape": [4, 8]})";
  EXPECT_TRUE(importFails(
      graph(two, R"({"op": "matmul", "inputs": ["a", "b"], "output": "c"})",
            R"({"name": "c"})"),
      "ops[0] (output \"c\"): matmul contracting sizes differ: lhs dim 1 is "
      "8, rhs dim 0 is 4",
      3, 10));
  // The note names the operands and their types.
  auto ctx = makeContext();
  Imported imported = importJson(
      *ctx,
      graph(two, R"({"op": "matmul", "inputs": ["a", "b"], "output": "c"})",
            R"({"name": "c"})"));
  ASSERT_FALSE(imported.diags.empty());
  ASSERT_EQ(imported.diags[0].notes.size(), 1u);
  EXPECT_EQ(imported.diags[0].notes[0],
            "operands: \"a\" is tensor<4x8xf32>, \"b\" is tensor<4x8xf32>");

  std::string mixed =
      R"({"name": "a", "shape": [4, 8]}, {"name": "b", "shape": [8, 4]})";
  EXPECT_TRUE(importFails(
      graph(mixed, R"({"op": "add", "inputs": ["a", "b"], "output": "c"})",
            R"({"name": "c"})"),
      "operands of \"add\" do not broadcast (NumPy rules: aligned at the "
      "last dim, sizes must be equal or 1): \"a\" is tensor<4x8xf32> but "
      "\"b\" is tensor<8x4xf32>",
      3, 10));
  // Broadcastable shapes of different element types are still an error.
  std::string typed =
      R"({"name": "a", "shape": [4, 8]}, {"name": "b", "shape": [8], "dtype": "i32"})";
  EXPECT_TRUE(importFails(
      graph(typed, R"({"op": "add", "inputs": ["a", "b"], "output": "c"})",
            R"({"name": "c"})"),
      "operands of \"add\" have different types: \"a\" is tensor<4x8xf32> "
      "but \"b\" is tensor<8xi32>"));
  EXPECT_TRUE(importFails(
      withOps(
          R"({"op": "reshape", "inputs": ["a"], "output": "b", "shape": [5, 7]})"),
      "ops[0] (output \"b\"): 'shardc.reshape' op cannot reshape "
      "'tensor<8x4xf32>' (32 elements) into 'tensor<5x7xf32>' (35 elements)",
      3, 10));
  EXPECT_TRUE(
      importFails(withOps(R"({"op": "transpose", "inputs": ["a"], "output": "b",
                  "permutation": [0, 0]})"),
                  "transpose dimension 0 is listed twice"));
  EXPECT_TRUE(importFails(
      withOps(R"({"op": "broadcast_in_dim", "inputs": ["a"], "output": "b",
                  "dims": [0, 1], "shape": [8, 5]})"),
      "operand dim 1 of size 4 cannot broadcast to result dim 1 of size 5"));
  EXPECT_TRUE(importFails(
      withOps(R"({"op": "dot_general", "inputs": ["a", "a"], "output": "b",
                  "lhs_contracting_dims": [1], "rhs_contracting_dims": [0]})"),
      "dot_general paired dimensions lhs 1 and rhs 0 differ in size"));
  EXPECT_TRUE(importFails(
      withOps(
          R"({"op": "reduce_max", "inputs": ["a"], "output": "b", "dims": [2]})"),
      "reduce dimension 2 is out of range for rank 2"));
  // The result of a matmul of huge operands has too many elements.
  EXPECT_TRUE(importFails(
      graph(
          R"({"name": "a", "shape": [4294967296, 1]}, {"name": "b", "shape": [1, 4294967296]})",
          R"({"op": "matmul", "inputs": ["a", "b"], "output": "c"})",
          R"({"name": "c"})"),
      "result shape [4294967296, 4294967296] has more elements than fit"));
}

TEST(JsonErrors, Constants) {
  EXPECT_TRUE(importFails(
      withOps(
          R"({"op": "constant", "output": "b", "shape": [2, 2], "values": [1, 2, 3]})"),
      "ops[0] (output \"b\").values: has 3 values but shape tensor<2x2xf32> "
      "has 4 elements",
      3, 71));
  EXPECT_TRUE(importFails(
      withOps(
          R"({"op": "constant", "output": "b", "shape": [2], "values": [1, "x"]})"),
      "values[1]: must be a number (or \"inf\", \"-inf\", \"nan\")"));
  EXPECT_TRUE(
      importFails(withOps(R"({"op": "constant", "output": "b", "shape": [2]})"),
                  "needs \"value\""));
  EXPECT_TRUE(importFails(
      withOps(R"({"op": "constant", "output": "b", "shape": [2], "value": 1,
                  "values": [1, 2]})"),
      "either \"value\" or \"values\", not both"));
  EXPECT_TRUE(importFails(
      withOps(R"({"op": "constant", "output": "b", "shape": [2], "dtype": "f16",
                  "value": 1e6})"),
      "out of range for the dtype"));
  EXPECT_TRUE(importFails(
      withOps(
          R"({"op": "constant", "output": "b", "shape": [2], "value": [1]})"),
      "value: must be a number"));
}

TEST(JsonErrors, Collectives) {
  auto op = [](llvm::StringRef fields) {
    return graph(kInputA,
                 (R"({"op": "all_gather", "inputs": ["a"], "output": "b", )" +
                  fields + "}")
                     .str(),
                 R"({"name": "b"})", R"(, "spmd": true)");
  };
  EXPECT_TRUE(importFails(op(R"("axes": ["z"], "dim": 0)"),
                          "axes: unknown mesh axis \"z\""));
  EXPECT_TRUE(importFails(op(R"("axes": [], "dim": 0)"),
                          "must list at least one mesh axis"));
  EXPECT_TRUE(importFails(op(R"("axes": ["x", "x"], "dim": 0)"),
                          "lists mesh axis \"x\" twice"));
  EXPECT_TRUE(importFails(op(R"("axes": ["x"], "dim": 2)"),
                          "dim: dim 2 is out of range for rank 2 (input "
                          "\"a\" is tensor<8x4xf32>)"));
  EXPECT_TRUE(
      importFails(op(R"("axes": ["x"])"), "missing required field \"dim\""));
  // A dim the group does not divide is cut into padded blocks
  // (json-uneven-collectives.test); a gather's "size" must fit its blocks.
  EXPECT_TRUE(importFails(
      graph(kInputA,
            R"({"op": "all_gather", "inputs": ["a"], "output": "b",
                "axes": ["y", "x"], "dim": 1, "size": 20})",
            R"({"name": "b"})"),
      "size 20 does not fit 8 blocks of 4 (dim 1 of input \"a\" "
      "(tensor<8x4xf32>) over axes [\"y\", \"x\"]): it must be between 25 "
      "and 32"));
  EXPECT_TRUE(
      importFails(graph(kInputA,
                        R"({"op": "all_reduce", "inputs": ["a"], "output": "b",
                "axes": ["y"], "reduction": "min"})",
                        R"({"name": "b"})"),
                  "unknown reduction \"min\"; expected \"sum\" or \"max\""));
  EXPECT_TRUE(
      importFails(graph(kInputA,
                        R"({"op": "all_to_all", "inputs": ["a"], "output": "b",
                "axes": ["y"], "split_dim": 1, "concat_dim": 1})",
                        R"({"name": "b"})"),
                  "split_dim and concat_dim must differ"));
  EXPECT_TRUE(importFails(
      graph(kInputA,
            R"({"op": "collective_permute", "inputs": ["a"], "output": "b",
                "axes": ["x"], "pairs": [[0, 2]]})",
            R"({"name": "b"})"),
      "pairs[0]: pair [0, 2] is outside the group of size 2"));
  EXPECT_TRUE(importFails(
      graph(kInputA,
            R"({"op": "collective_permute", "inputs": ["a"], "output": "b",
                "axes": ["y"], "pairs": [[0, 1], [0, 2]]})",
            R"({"name": "b"})"),
      "source 0 appears twice"));
  EXPECT_TRUE(importFails(
      graph(kInputA,
            R"({"op": "collective_permute", "inputs": ["a"], "output": "b",
                "axes": ["y"], "pairs": [[0, 1, 2]]})",
            R"({"name": "b"})"),
      "pairs[0]: pairs must be a list of [source, target] integer pairs, got "
      "[0, 1, 2]"));
}

TEST(JsonErrors, ConstraintNeedsSharding) {
  EXPECT_TRUE(importFails(
      withOps(R"({"op": "sharding_constraint", "inputs": ["a"], "output": "b",
                  "sharding": ["x", null], "result_partial": ["y"]})"),
      "result_partial: needs a \"result_sharding\" next to it"));
  EXPECT_TRUE(importFails(
      withOps(
          R"({"op": "sharding_constraint", "inputs": ["a"], "output": "b"})"),
      "missing required field \"sharding\""));
  EXPECT_TRUE(importFails(
      withOps(R"({"op": "sharding_constraint", "inputs": ["a"], "output": "b",
                  "sharding": ["x", "q"]})"),
      "unknown mesh axis \"q\""));
  auto ctx = makeContext();
  EXPECT_TRUE(importJson(*ctx, withOps(R"({"op": "sharding_constraint",
                                          "inputs": ["a"], "output": "b",
                                          "sharding": [null, ["y", "x"]]})"))
                  .module);
}

} // namespace

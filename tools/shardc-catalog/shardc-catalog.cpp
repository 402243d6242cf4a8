//===- shardc-catalog.cpp - lists written from the registered ops ---------===//
//
// What other tools need to know of the ops, written from the op registry
// rather than kept by hand: the JSON graph format's schema
// (--json-schema; docs/json-format.md) and libFuzzer dictionaries of the
// op names (--fuzz-dict=mlir|json; the fuzz build writes them next to its
// harnesses). A new op is in all of them once it is registered.
//
//===----------------------------------------------------------------------===//

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Import/JsonGraphSchema.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

static cl::opt<bool>
    jsonSchema("json-schema",
               cl::desc("Print the JSON Schema of the JSON graph format"));

static cl::opt<std::string> fuzzDict(
    "fuzz-dict",
    cl::desc("Print a libFuzzer dictionary of the registered ops: 'mlir' "
             "(shardc.<op>) or 'json' (\"<op>\" and the entries' field keys)"),
    cl::value_desc("mlir|json"));

static cl::opt<std::string> dictBase(
    "dict-base",
    cl::desc("With --fuzz-dict: a dictionary of the format's other tokens, "
             "copied first"),
    cl::value_desc("file"));

static cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                       cl::value_desc("file"), cl::init("-"));

/// A libFuzzer dictionary entry: the token as a C-escaped string.
static void writeToken(raw_ostream &os, StringRef token) {
  os << '"';
  for (char c : token) {
    if (c == '"' || c == '\\')
      os << '\\';
    os << c;
  }
  os << "\"\n";
}

static int writeFuzzDict(mlir::MLIRContext &ctx, raw_ostream &os) {
  if (!dictBase.empty()) {
    ErrorOr<std::unique_ptr<MemoryBuffer>> base =
        MemoryBuffer::getFile(dictBase);
    if (!base) {
      errs() << "shardc-catalog: cannot read " << dictBase << ": "
             << base.getError().message() << "\n";
      return 1;
    }
    os << (*base)->getBuffer();
  }
  if (fuzzDict == "mlir") {
    os << "# The registered ops (shardc-catalog --fuzz-dict=mlir).\n";
    ctx.getOrLoadDialect<shardc::ShardcDialect>();
    std::vector<std::string> names;
    for (mlir::RegisteredOperationName name : ctx.getRegisteredOperations())
      if (name.getDialectNamespace() ==
          shardc::ShardcDialect::getDialectNamespace())
        names.push_back(name.getStringRef().str());
    llvm::sort(names);
    for (const std::string &name : names)
      writeToken(os, name);
    return 0;
  }
  os << "# The ops and field keys of graph entries (shardc-catalog "
        "--fuzz-dict=json).\n";
  for (const std::string &word : shardc::jsonGraphVocabulary(ctx))
    writeToken(os, "\"" + word + "\"");
  return 0;
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(
      argc, argv, "shardc-catalog: lists written from the registered ops\n");
  if (jsonSchema == !fuzzDict.empty()) {
    errs() << "shardc-catalog: give one of --json-schema, --fuzz-dict\n";
    return 1;
  }
  if (!fuzzDict.empty() && fuzzDict != "mlir" && fuzzDict != "json") {
    errs() << "shardc-catalog: --fuzz-dict is 'mlir' or 'json', not '"
           << fuzzDict << "'\n";
    return 1;
  }
  std::error_code error;
  ToolOutputFile out(outputFile, error, sys::fs::OF_Text);
  if (error) {
    errs() << "shardc-catalog: cannot write " << outputFile << ": "
           << error.message() << "\n";
    return 1;
  }
  mlir::MLIRContext ctx;
  if (jsonSchema) {
    shardc::writeJsonGraphSchema(ctx, out.os());
  } else if (int status = writeFuzzDict(ctx, out.os())) {
    return status;
  }
  out.keep();
  return 0;
}

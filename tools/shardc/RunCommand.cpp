//===- RunCommand.cpp - `shardc run` --------------------------------------===//
//
// Executes the unsharded model with the reference interpreter: inputs from
// .npy files or a seeded generator, one <output name>.npy per output.
//
//===----------------------------------------------------------------------===//

#include "SharedOptions.h"
#include "ToolCommon.h"

#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Support/Npy.h"
#include "shardc/Support/RandomTensor.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::list<std::string>
    inputBindings("inputs",
                  cl::desc("Input values as name=file.npy (space or comma "
                           "separated)"),
                  cl::CommaSeparated, cl::sub(shardc::runCommand));

static cl::opt<uint64_t> seed("seed",
                              cl::desc("Generate inputs not given by --inputs "
                                       "from this seed (uniform in [-1, 1))"),
                              cl::sub(shardc::runCommand));

static cl::opt<std::string> outDir("out-dir",
                                   cl::desc("Directory for <output>.npy files"),
                                   cl::init("."), cl::sub(shardc::runCommand));

static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") + std::to_string(d);
  return s + "]";
}

/// Resolves every function input from --inputs or --seed; reports the first
/// problem by input name.
static FailureOr<SmallVector<shardc::Tensor>> gatherInputs(func::FuncOp func) {
  llvm::StringMap<std::string> files;
  for (StringRef binding : inputBindings) {
    auto [name, path] = binding.split('=');
    if (name.empty() || path.empty()) {
      llvm::errs() << "shardc: error: --inputs expects name=file.npy, got '"
                   << binding << "'\n";
      return failure();
    }
    if (!files.try_emplace(name, path.str()).second) {
      llvm::errs() << "shardc: error: input '" << name
                   << "' is given twice in --inputs\n";
      return failure();
    }
  }
  llvm::StringMap<unsigned> known;
  std::string knownList;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    std::string name = shardc::getInputName(func, i);
    known[name] = i;
    knownList += (i ? ", " : "") + name;
  }
  for (const auto &entry : files)
    if (!known.contains(entry.getKey())) {
      llvm::errs() << "shardc: error: the model has no input named '"
                   << entry.getKey() << "' (its inputs: " << knownList << ")\n";
      return failure();
    }

  SmallVector<shardc::Tensor> args;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    std::string name = shardc::getInputName(func, i);
    auto type = cast<RankedTensorType>(func.getArgument(i).getType());
    auto it = files.find(name);
    if (it == files.end()) {
      if (seed.getNumOccurrences() == 0) {
        llvm::errs() << "shardc: error: input '" << name
                     << "' has no value: pass --inputs " << name
                     << "=FILE.npy or --seed N\n";
        return failure();
      }
      args.push_back(shardc::randomTensor(type.getShape(), seed, name));
      continue;
    }
    llvm::Expected<shardc::Tensor> t = shardc::readNpy(it->second);
    if (!t) {
      llvm::errs() << "shardc: error: input '" << name
                   << "': " << llvm::toString(t.takeError()) << "\n";
      return failure();
    }
    if (ArrayRef<int64_t>(t->getShape()) != type.getShape()) {
      llvm::errs() << "shardc: error: input '" << name << "' from "
                   << it->second << " has shape " << shapeString(t->getShape())
                   << " but the model expects " << shapeString(type.getShape())
                   << "\n";
      return failure();
    }
    args.push_back(std::move(*t));
  }
  return args;
}

int shardc::runRunCommand() {
  ToolSession session;
  OwningOpRef<ModuleOp> module = session.loadInputModel();
  if (!module)
    return 1;
  func::FuncOp func = getEntryFunction(*module);
  if (!func)
    return 1;
  FailureOr<SmallVector<Tensor>> args = gatherInputs(func);
  if (failed(args))
    return 1;
  FailureOr<SmallVector<Tensor>> results = interpretFunction(func, *args);
  if (failed(results))
    return 1;
  if (std::error_code ec = llvm::sys::fs::create_directories(outDir.getValue())) {
    llvm::errs() << "shardc: error: cannot create '" << outDir
                 << "': " << ec.message() << "\n";
    return 1;
  }
  std::vector<std::string> names = getOutputNames(func);
  for (auto [name, tensor] : llvm::zip(names, *results)) {
    SmallString<128> path(outDir.getValue());
    llvm::sys::path::append(path, name + ".npy");
    if (llvm::Error err = writeNpy(path, tensor)) {
      llvm::errs() << "shardc: error: " << llvm::toString(std::move(err))
                   << "\n";
      return 1;
    }
    llvm::outs() << "wrote " << path << " " << shapeString(tensor.getShape())
                 << "\n";
  }
  return 0;
}

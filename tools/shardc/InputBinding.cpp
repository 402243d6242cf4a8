//===- InputBinding.cpp - --inputs and --seed -----------------------------===//
//
// The model's inputs for `run`, `simulate`, `exec` and `train`: .npy files
// bound by name, then a checkpoint's tensors, the rest generated from a
// seed (or an error: an input without a value is never silently random).
//
//===----------------------------------------------------------------------===//

#include "ToolCommon.h"

#include "shardc/Dialect/ValueNames.h"
#include "shardc/Driver/SeededInputs.h"
#include "shardc/Import/Checkpoint.h"
#include "shardc/Interpreter/Interpreter.h"
#include "shardc/Support/CheckpointEntries.h"
#include "shardc/Support/HalfFloat.h"
#include "shardc/Support/Npy.h"
#include "shardc/Support/RandomTensor.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace shardc;
namespace cl = llvm::cl;

static cl::list<std::string>
    inputBindings("inputs",
                  cl::desc("Input values as name=file.npy (space or comma "
                           "separated)"),
                  cl::CommaSeparated, cl::sub(shardc::runCommand),
                  cl::sub(shardc::simulateCommand),
                  cl::sub(shardc::execCommand), cl::sub(shardc::trainCommand),
                  cl::sub(shardc::pipelineCommand));

/// `f32`, `i64`, ... as the IR spells an element type.
static std::string typeStr(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  type.print(os);
  return s;
}

static cl::opt<std::string> checkpointPath(
    "checkpoint",
    cl::desc("Values of the inputs not given by --inputs, by name, from a "
             "checkpoint (.onnx: the model's float initializers)"),
    cl::sub(shardc::runCommand), cl::sub(shardc::simulateCommand),
    cl::sub(shardc::execCommand), cl::sub(shardc::trainCommand));

/// The inputs whose value came from a file (--inputs or --checkpoint).
static llvm::StringSet<> givenByFile;

static cl::opt<uint64_t> seed("seed",
                              cl::desc("Generate inputs not given by --inputs "
                                       "from this seed (data uniform in "
                                       "[-1, 1), parameters scaled by "
                                       "their fan-in)"),
                              cl::sub(shardc::runCommand),
                              cl::sub(shardc::simulateCommand),
                              cl::sub(shardc::execCommand),
                              cl::sub(shardc::trainCommand),
                              cl::sub(shardc::pipelineCommand));

uint64_t shardc::getSeed() { return seed; }

std::string shardc::shapeString(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") + std::to_string(d);
  return s + "]";
}

namespace {

/// --inputs as {name: path}; fails after a message on a malformed or
/// repeated binding, or a name that is no input (`known`, listed in
/// `knownList`).
FailureOr<llvm::StringMap<std::string>>
parseInputFiles(const llvm::StringMap<unsigned> &known, StringRef knownList) {
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
  for (const auto &entry : files)
    if (!known.contains(entry.getKey())) {
      llvm::errs() << "shardc: error: the model has no input named '"
                   << entry.getKey() << "' (its inputs: " << knownList << ")\n";
      return failure();
    }
  return files;
}

/// The --checkpoint entries that set inputs of `func` (none without
/// --checkpoint); fails after a message on an unreadable file or an entry
/// that is no input.
FailureOr<std::map<std::string, Tensor>>
readCheckpointInputs(func::FuncOp func, const llvm::StringMap<unsigned> &known,
                     StringRef knownList) {
  if (checkpointPath.empty())
    return std::map<std::string, Tensor>();
  llvm::Expected<std::map<std::string, Tensor>> read =
      readCheckpoint(checkpointPath);
  if (!read) {
    llvm::errs() << "shardc: error: " << llvm::toString(read.takeError())
                 << "\n";
    return failure();
  }
  std::map<std::string, Tensor> checkpoint = std::move(*read);
  // A buffer is a constant of the model: its checkpoint entry (torch's
  // state_dict has one) sets nothing. The import records every buffer,
  // found or named with --buffers.
  for (const std::string &buffer : getModelBufferNames(func))
    checkpoint.erase(buffer);
  // So do a state_dict's integer and boolean buffers, which the export
  // may have folded away, and a tied weight's second name.
  for (const auto &[name, why] : skippedCheckpointEntries(
           checkpoint, [&](StringRef name) { return known.contains(name); }))
    checkpoint.erase(name);
  for (const auto &[name, tensor] : checkpoint)
    if (!known.contains(name)) {
      llvm::errs() << "shardc: error: checkpoint " << checkpointPath << " has '"
                   << name << "', which is no input of the model (its inputs: "
                   << knownList << ")\n";
      return failure();
    }
  return checkpoint;
}

/// Argument `i` of `func` from its checkpoint entry `saved`, stored in the
/// checkpoint's shape when the model computes on another view of it (a
/// stacked fused projection).
FailureOr<Tensor> inputFromCheckpoint(func::FuncOp func, unsigned i,
                                      Tensor &saved) {
  std::string name = getArgumentName(func, i);
  auto type = cast<RankedTensorType>(func.getArgument(i).getType());
  SmallVector<int64_t> stored = getCheckpointShape(func, i);
  if (saved.getShape() != ArrayRef<int64_t>(stored) ||
      executableDType(type.getElementType()) != saved.dtype()) {
    llvm::errs() << "shardc: error: input '" << name << "' from "
                 << checkpointPath << " has shape "
                 << shapeString(saved.getShape()) << " of "
                 << dtypeName(saved.dtype()) << " but the model expects "
                 << shapeString(stored) << " of "
                 << typeStr(type.getElementType()) << "\n";
    return failure();
  }
  if (llvm::Error e = saved.reshape(type.getShape())) {
    llvm::errs() << "shardc: error: input '" << name << "' from "
                 << checkpointPath << ": " << llvm::toString(std::move(e))
                 << "\n";
    return failure();
  }
  givenByFile.insert(name);
  return std::move(saved);
}

/// Argument `i` of `func`, given by no file: an optimizer state's initial
/// value, or the --seed draw.
FailureOr<Tensor> generatedInput(func::FuncOp func, unsigned i) {
  std::string name = getArgumentName(func, i);
  // Optimizer state starts where the optimizer starts it, not at random
  // (a random second moment could be negative).
  llvm::Expected<std::optional<Tensor>> state = initialOptimizerState(func, i);
  if (!state) {
    llvm::errs() << "shardc: error: input '" << name
                 << "': " << llvm::toString(state.takeError()) << "\n";
    return failure();
  }
  if (*state)
    return std::move(**state);
  if (seed.getNumOccurrences() == 0) {
    llvm::errs() << "shardc: error: input '" << name
                 << "' has no value: pass --inputs " << name
                 << "=FILE.npy, a --checkpoint holding it, or --seed N\n";
    return failure();
  }
  // The draw every front end makes (shardc/Driver/SeededInputs.h).
  llvm::Expected<Tensor> t = drawSeededInput(func, i, seed);
  if (!t) {
    llvm::errs() << "shardc: error: input '" << name
                 << "': " << llvm::toString(t.takeError()) << "\n";
    return failure();
  }
  return std::move(*t);
}

/// Argument `i` of `func` from the .npy file `path`.
FailureOr<Tensor> inputFromFile(func::FuncOp func, unsigned i, StringRef path) {
  std::string name = getArgumentName(func, i);
  auto type = cast<RankedTensorType>(func.getArgument(i).getType());
  llvm::Expected<Tensor> t = readNpy(path);
  if (!t) {
    llvm::errs() << "shardc: error: input '" << name
                 << "': " << llvm::toString(t.takeError()) << "\n";
    return failure();
  }
  if (t->getShape() != type.getShape()) {
    llvm::errs() << "shardc: error: input '" << name << "' from " << path
                 << " has shape " << shapeString(t->getShape())
                 << " but the model expects " << shapeString(type.getShape())
                 << "\n";
    return failure();
  }
  // NumPy has no bf16: a bf16 input is read from f32 values, rounded to
  // nearest even (exact for a file shardc wrote).
  std::optional<DType> want = executableDType(type.getElementType());
  if (want && isHalfDType(*want) && t->dtype() == DType::F32) {
    llvm::Expected<Tensor> narrowed = narrowFromF32(*t, *want);
    if (!narrowed) {
      llvm::errs() << "shardc: error: input '" << name
                   << "': " << llvm::toString(narrowed.takeError()) << "\n";
      return failure();
    }
    *t = std::move(*narrowed);
  }
  givenByFile.insert(name);
  return std::move(*t);
}

} // namespace

FailureOr<SmallVector<shardc::Tensor>>
shardc::gatherInputs(func::FuncOp func, ArrayRef<std::string> fedElsewhere) {
  llvm::StringMap<unsigned> known;
  std::string knownList;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    std::string name = getArgumentName(func, i);
    known[name] = i;
    knownList += (i ? ", " : "") + name;
  }
  FailureOr<llvm::StringMap<std::string>> files =
      parseInputFiles(known, knownList);
  if (failed(files))
    return failure();
  FailureOr<std::map<std::string, Tensor>> checkpoint =
      readCheckpointInputs(func, known, knownList);
  if (failed(checkpoint))
    return failure();
  SmallVector<Tensor> args;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    std::string name = getArgumentName(func, i);
    auto type = cast<RankedTensorType>(func.getArgument(i).getType());
    if (llvm::is_contained(fedElsewhere, name)) {
      args.push_back(llvm::cantFail(Tensor::allocate(
          type.getShape(),
          executableDType(type.getElementType()).value_or(DType::F32))));
      continue;
    }
    FailureOr<Tensor> t = failure();
    if (auto it = files->find(name); it != files->end())
      t = inputFromFile(func, i, it->second);
    else if (auto saved = checkpoint->find(name); saved != checkpoint->end())
      t = inputFromCheckpoint(func, i, saved->second);
    else
      t = generatedInput(func, i);
    if (failed(t))
      return failure();
    args.push_back(std::move(*t));
  }
  return args;
}

bool shardc::isInputGivenByFile(StringRef name) {
  return givenByFile.contains(name);
}

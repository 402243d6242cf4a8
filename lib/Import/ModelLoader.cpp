//===- ModelLoader.cpp - reading .mlir, .json and .onnx models ------------===//

#include "shardc/Import/ModelLoader.h"

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Dialect/ValueNames.h"
#include "shardc/Import/JsonImporter.h"
#include "shardc/Import/OnnxImporter.h"
#include "shardc/Support/NestingDepth.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/AsmParser/AsmParserState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace mlir;

llvm::Expected<shardc::ModelFormat>
shardc::resolveModelFormat(StringRef path, StringRef explicitFormat) {
  if (explicitFormat == "mlir")
    return ModelFormat::Mlir;
  if (explicitFormat == "json")
    return ModelFormat::Json;
  if (explicitFormat == "onnx")
    return ModelFormat::Onnx;
  if (!explicitFormat.empty())
    return llvm::createStringError("unknown input format '" + explicitFormat +
                                   "' (expected mlir, json or onnx)");
  StringRef ext = llvm::sys::path::extension(path);
  if (ext == ".mlir")
    return ModelFormat::Mlir;
  if (ext == ".json")
    return ModelFormat::Json;
  if (ext == ".onnx")
    return ModelFormat::Onnx;
  if (path == "-")
    return llvm::createStringError("reading from stdin needs "
                                   "--input-format=mlir, json or onnx");
  return llvm::createStringError("cannot tell the format of '" + path +
                                 "' from its extension (expected .mlir, "
                                 ".json or .onnx, or pass --input-format)");
}

/// `%name` or `%name#2` as written in the source, without `%` and `#N`.
static StringRef ssaNameAt(llvm::SMRange range) {
  if (!range.isValid())
    return "";
  StringRef text(range.Start.getPointer(),
                 range.End.getPointer() - range.Start.getPointer());
  text = text.ltrim('%');
  text = text.take_until([](char c) { return c == '#'; });
  // Numbered names (%0, %arg1) carry nothing the user chose.
  if (text.empty() || isdigit(text[0]) ||
      (text.starts_with("arg") && text.size() > 3 &&
       llvm::all_of(text.drop_front(3), ::isdigit)))
    return "";
  return text;
}

static Location withName(Location loc, StringRef name) {
  if (name.empty() || !shardc::getNameFromLoc(loc).empty())
    return loc;
  return NameLoc::get(StringAttr::get(loc.getContext(), name), loc);
}

/// Gives every value the SSA name it was written with, so diagnostics,
/// `explain` and JSON export speak the user's names.
static void applySourceNames(const AsmParserState &state) {
  for (const auto &def : state.getOpDefs()) {
    Operation *op = def.op;
    if (op->getNumResults() != 1 || def.resultGroups.empty())
      continue;
    op->setLoc(withName(op->getLoc(),
                        ssaNameAt(def.resultGroups.front().definition.loc)));
  }
  for (const auto &def : state.getBlockDefs()) {
    Block *block = def.block;
    for (auto [arg, argDef] : llvm::zip(block->getArguments(), def.arguments))
      arg.setLoc(withName(arg.getLoc(), ssaNameAt(argDef.loc)));
  }
}

OwningOpRef<ModuleOp> shardc::loadModel(StringRef path, ModelFormat format,
                                        llvm::SourceMgr &sourceMgr,
                                        MLIRContext *ctx,
                                        const OnnxImportOptions &onnx) {
  std::string error;
  auto file = mlir::openInputFile(path, &error);
  if (!file) {
    emitError(UnknownLoc::get(ctx))
        << "cannot read '" << path << "': " << error;
    return nullptr;
  }
  StringRef name = path == "-" ? StringRef("<stdin>") : path;
  if (format == ModelFormat::Onnx)
    return importOnnxModel(file->getBuffer(), name, ctx, onnx);
  // Only an ONNX file stores values without saying whether they are
  // trained; a JSON or MLIR input is a parameter only when marked "param".
  if (!onnx.buffers.empty()) {
    emitError(FileLineColLoc::get(ctx, name, 0, 0))
        << "buffers (\"" << onnx.buffers.front()
        << "\") name initializers of an .onnx model; in a JSON or MLIR "
           "model, an input not marked \"param\" is not trained";
    return nullptr;
  }
  std::unique_ptr<llvm::MemoryBuffer> buffer =
      llvm::MemoryBuffer::getMemBufferCopy(file->getBuffer(), name);
  StringRef text = buffer->getBuffer();
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());

  if (format == ModelFormat::Json)
    return importJsonGraph(text, name, ctx);

  // MLIR's parser recurses once per level: bound the depth before it runs,
  // or a deep file overflows the stack instead of getting a diagnostic.
  if (std::optional<size_t> at =
          findExcessNesting(text, kMaxMlirNestingDepth, NestingSyntax::Mlir)) {
    auto [line, column] = sourceMgr.getLineAndColumn(
        llvm::SMLoc::getFromPointer(text.data() + *at));
    emitError(FileLineColLoc::get(ctx, name, line, column))
        << "nesting deeper than " << kMaxMlirNestingDepth
        << " levels (of brackets, braces, parentheses and angle brackets)";
    return nullptr;
  }

  Block block;
  AsmParserState state;
  ParserConfig config(ctx);
  if (failed(parseAsmSourceFile(sourceMgr, &block, config, &state)))
    return nullptr;
  applySourceNames(state);
  // Like parseSourceFile: a lone module is the result, anything else is
  // wrapped in a new one.
  OwningOpRef<ModuleOp> module;
  if (llvm::hasSingleElement(block) && isa<ModuleOp>(block.front())) {
    auto parsed = cast<ModuleOp>(block.front());
    parsed->remove();
    module = parsed;
  } else {
    module = ModuleOp::create(FileLineColLoc::get(ctx, name, 1, 1));
    auto &body = module->getBodyRegion().front();
    body.getOperations().splice(body.begin(), block.getOperations());
  }
  if (failed(verify(*module)))
    return nullptr;
  return module;
}

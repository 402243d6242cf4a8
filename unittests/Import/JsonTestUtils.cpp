//===- JsonTestUtils.cpp - helpers for the JSON graph tests ---------------===//

#include "JsonTestUtils.h"

#include "shardc/Dialect/ShardcDialect.h"
#include "shardc/Export/JsonExporter.h"
#include "shardc/Import/JsonImporter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Parser/Parser.h"

#include <map>
#include <regex>

using namespace mlir;

namespace shardc::test {

static FileLineColLoc innermostFileLoc(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return file;
  if (auto name = dyn_cast<NameLoc>(loc))
    return innermostFileLoc(name.getChildLoc());
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (auto file = innermostFileLoc(inner))
        return file;
  return {};
}

DiagCapture::DiagCapture(MLIRContext &ctx)
    : handler(&ctx, [this](Diagnostic &d) {
        Diag diag{d.getSeverity(), d.str(), "", 0, 0, {}};
        if (FileLineColLoc file = innermostFileLoc(d.getLocation())) {
          diag.file = file.getFilename().str();
          diag.line = file.getLine();
          diag.column = file.getColumn();
        }
        for (Diagnostic &note : d.getNotes())
          diag.notes.push_back(note.str());
        diags.push_back(std::move(diag));
        return success();
      }) {}

static std::string describe(const std::vector<Diag> &diags) {
  std::string out;
  for (const Diag &d : diags) {
    out += d.file + ":" + std::to_string(d.line) + ":" +
           std::to_string(d.column) + ": " + d.message + "\n";
    for (const std::string &n : d.notes)
      out += "  note: " + n + "\n";
  }
  return out;
}

std::string DiagCapture::text() const { return describe(diags); }
std::string Imported::text() const { return describe(diags); }

std::unique_ptr<MLIRContext> makeContext() {
  auto ctx = std::make_unique<MLIRContext>(MLIRContext::Threading::DISABLED);
  ctx->loadDialect<ShardcDialect, func::FuncDialect>();
  return ctx;
}

Imported importJson(MLIRContext &ctx, llvm::StringRef json,
                    llvm::StringRef file) {
  Imported result;
  DiagCapture capture(ctx);
  result.module = importJsonGraph(json, file, &ctx);
  result.diags = std::move(capture.diags);
  return result;
}

std::string exportJson(ModuleOp module, std::vector<Diag> *diags) {
  DiagCapture capture(*module.getContext());
  std::string out;
  llvm::raw_string_ostream os(out);
  LogicalResult ok = exportJsonGraph(module, os);
  if (diags)
    *diags = capture.diags;
  return succeeded(ok) ? out : std::string();
}

OwningOpRef<ModuleOp> parseMlir(MLIRContext &ctx, llvm::StringRef text) {
  return parseSourceString<ModuleOp>(text, &ctx);
}

std::string printNormalized(ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os);
  static const std::regex ssa(R"(%[A-Za-z0-9_$.\-]+)");
  std::map<std::string, std::string> renamed;
  std::string out;
  auto begin = std::sregex_iterator(text.begin(), text.end(), ssa);
  size_t last = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    out += text.substr(last, it->position() - last);
    auto [entry, fresh] =
        renamed.try_emplace(it->str(), "%v" + std::to_string(renamed.size()));
    out += entry->second;
    last = it->position() + it->length();
  }
  out += text.substr(last);
  return out;
}

std::string graph(llvm::StringRef inputs, llvm::StringRef ops,
                  llvm::StringRef outputs, llvm::StringRef extra) {
  return (R"({"mesh": {"name": "mesh", "axes": [["y", 4], ["x", 2]]},)"
          "\n \"inputs\": [" +
          inputs + "],\n \"ops\": [" + ops + "],\n \"outputs\": [" + outputs +
          "]" + extra + "}\n")
      .str();
}

::testing::AssertionResult importFails(llvm::StringRef json,
                                       llvm::StringRef substring, unsigned line,
                                       unsigned column) {
  auto ctx = makeContext();
  Imported imported = importJson(*ctx, json);
  if (imported.module)
    return ::testing::AssertionFailure() << "import succeeded";
  if (imported.diags.empty())
    return ::testing::AssertionFailure() << "import failed silently";
  const Diag &first = imported.diags.front();
  auto fail = [&] {
    return ::testing::AssertionFailure() << "diagnostics:\n" << imported.text();
  };
  if (first.severity != DiagnosticSeverity::Error)
    return fail() << "the first diagnostic is not an error";
  if (first.file != "graph.json" || first.line == 0 || first.column == 0)
    return fail() << "the error is not located in graph.json";
  if (line && (first.line != line || (column && first.column != column)))
    return fail() << "expected the error at " << line << ":" << column;
  for (const Diag &d : imported.diags)
    if (llvm::StringRef(d.message).contains(substring))
      return ::testing::AssertionSuccess();
  return fail() << "no error contains \"" << substring.str() << "\"";
}

} // namespace shardc::test

//===- MachineFile.cpp - reading a machine description file ---------------===//
//
// docs/machines.md is the schema. Every field is checked: an unknown key
// is an error (a misspelt "bytes_per_s" would otherwise leave a default
// in place silently), and so is a missing or non-positive figure.
//
//===----------------------------------------------------------------------===//

#include "shardc/Analysis/CostModel.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace shardc;
using llvm::StringRef;

namespace {
/// Reads one object's fields, remembering the path for messages.
class FieldReader {
public:
  FieldReader(const llvm::json::Object &object, std::string where,
              std::string &error)
      : object(object), where(std::move(where)), error(error) {}

  /// A positive number; absent: `fallback` (or an error when `required`).
  double number(StringRef key, double fallback, bool required = false) {
    seen.insert(key);
    const llvm::json::Value *v = object.get(key);
    if (!v) {
      if (required)
        fail("needs \"" + key + "\"");
      return fallback;
    }
    std::optional<double> d = v->getAsNumber();
    if (!d || !(*d > 0)) {
      fail("\"" + key + "\" must be a positive number");
      return fallback;
    }
    return *d;
  }
  const llvm::json::Object *object_(StringRef key, bool required) {
    seen.insert(key);
    const llvm::json::Value *v = object.get(key);
    if (!v) {
      if (required)
        fail("needs \"" + key + "\"");
      return nullptr;
    }
    if (!v->getAsObject())
      fail("\"" + key + "\" must be an object");
    return v->getAsObject();
  }
  const llvm::json::Value *any(StringRef key) {
    seen.insert(key);
    return object.get(key);
  }
  /// Fails on a key no call asked for.
  void checkUnknown() {
    for (const auto &kv : object)
      if (!seen.contains(kv.first.str()))
        fail("has unknown field \"" + kv.first.str() + "\"");
  }
  void fail(const llvm::Twine &message) {
    if (error.empty())
      error = where + " " + message.str();
  }
  const std::string &path() const { return where; }

private:
  const llvm::json::Object &object;
  std::string where;
  std::string &error;
  llvm::StringSet<> seen;
};
} // namespace

static LinkModel readLink(FieldReader &parent, StringRef key, bool required,
                          LinkModel fallback, std::string &error) {
  const llvm::json::Object *o = parent.object_(key, required);
  if (!o)
    return fallback;
  FieldReader r(*o, "\"" + key.str() + "\"", error);
  LinkModel link;
  link.latencySeconds = r.number("latency_s", 0, /*required=*/true);
  link.bytesPerSecond = r.number("bytes_per_s", 0, /*required=*/true);
  link.syncSeconds = r.number("sync_s", 0);
  r.checkUnknown();
  return link;
}

llvm::Expected<MachineModel> shardc::parseMachineModel(StringRef text,
                                                       StringRef origin) {
  auto makeError = [&](const llvm::Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   origin + ": " + message);
  };
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(text);
  if (!json)
    return makeError("not JSON: " + llvm::toString(json.takeError()));
  const llvm::json::Object *root = json->getAsObject();
  if (!root)
    return makeError("a machine file is a JSON object");

  std::string error;
  MachineModel m;
  FieldReader top(*root, "the machine", error);
  if (const llvm::json::Value *name = top.any("name")) {
    if (!name->getAsString())
      top.fail("\"name\" must be a string");
    else
      m.name = name->getAsString()->str();
  }
  (void)top.any("description"); // free text: where the figures come from
  if (const llvm::json::Value *n = top.any("devices_per_node")) {
    std::optional<int64_t> i = n->getAsInteger();
    if (!i || *i < 1)
      top.fail("\"devices_per_node\" must be a positive integer");
    else
      m.devicesPerNode = *i;
  }
  if (const llvm::json::Value *n = top.any("host_cores")) {
    std::optional<int64_t> i = n->getAsInteger();
    if (!i || *i < 1)
      top.fail("\"host_cores\" must be a positive integer");
    else
      m.hostCores = *i;
  }
  m.hostWaitSeconds = top.number("host_wait_s", 0);
  if (m.hostWaitSeconds > 0 && m.hostCores <= 0)
    top.fail("\"host_wait_s\" needs \"host_cores\"");
  LinkModel intra =
      readLink(top, "intra_node_link", /*required=*/true, m.intraNode(), error);
  m.linkLatencySeconds = intra.latencySeconds;
  m.linkBytesPerSecond = intra.bytesPerSecond;
  m.linkSyncSeconds = intra.syncSeconds;
  // Without an inter-node link every device shares the one node.
  m.interNode =
      readLink(top, "inter_node_link", m.devicesPerNode > 0, intra, error);

  if (const llvm::json::Object *device = top.object_("device", true)) {
    FieldReader d(*device, "\"device\"", error);
    m.memoryBytes = int64_t(d.number("memory_bytes", 0));
    m.memoryBytesPerSecond = d.number("memory_bytes_per_s", 0);
    m.memoryEfficiency = d.number("memory_efficiency", 1);
    if (m.memoryEfficiency > 1)
      d.fail("\"memory_efficiency\" must be at most 1");
    m.opOverheadSeconds = d.number("op_overhead_s", 0);
    if (const llvm::json::Value *fuses = d.any("fuses_elementwise")) {
      if (std::optional<bool> b = fuses->getAsBoolean())
        m.fusesElementwise = *b;
      else
        d.fail("\"fuses_elementwise\" must be true or false");
    }
    if (const llvm::json::Object *peaks =
            d.object_("peak_flops_per_s", /*required=*/true)) {
      FieldReader p(*peaks, "\"peak_flops_per_s\"", error);
      double f32 = p.number("f32", 0, /*required=*/true);
      double tf32 = p.number("tf32", f32);
      double f16 = p.number("f16", f32);
      double bf16 = p.number("bf16", f16);
      m.peakFlops[int(ComputeType::BF16)] = bf16;
      m.peakFlops[int(ComputeType::F16)] = f16;
      m.peakFlops[int(ComputeType::TF32)] = tf32;
      m.peakFlops[int(ComputeType::F32)] = f32;
      p.checkUnknown();
    }
    if (const llvm::json::Value *table = d.any("gemm_efficiency")) {
      const llvm::json::Array *rows = table->getAsArray();
      if (!rows || rows->empty())
        d.fail("\"gemm_efficiency\" must be a non-empty array of "
               "[flops, efficiency] pairs");
      else
        for (const llvm::json::Value &row : *rows) {
          const llvm::json::Array *pair = row.getAsArray();
          std::optional<double> x, y;
          if (pair && pair->size() == 2) {
            x = (*pair)[0].getAsNumber();
            y = (*pair)[1].getAsNumber();
          }
          if (!x || !y || !(*x > 0) || !(*y > 0) || *y > 1 ||
              (!m.gemmEfficiency.empty() &&
               !(*x > m.gemmEfficiency.back().first))) {
            d.fail("\"gemm_efficiency\" rows are [flops, efficiency] with "
                   "flops positive and increasing, efficiency in (0, 1]");
            break;
          }
          m.gemmEfficiency.push_back({*x, *y});
        }
    }
    d.checkUnknown();
  }
  top.checkUnknown();
  if (!error.empty())
    return makeError(error);
  double best = 1;
  if (!m.gemmEfficiency.empty()) {
    best = 0;
    for (auto [flops, e] : m.gemmEfficiency)
      best = std::max(best, e);
  }
  m.flopsPerSecond = m.peakFlops[int(ComputeType::F32)] * best;
  return m;
}

llvm::Expected<MachineModel> shardc::loadMachineModel(StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot read machine file '" + path +
                                       "': " + buffer.getError().message());
  return parseMachineModel((*buffer)->getBuffer(), path);
}

llvm::Expected<MachineModel> shardc::resolveMachineModel(StringRef path,
                                                         double linkLatency,
                                                         double linkBandwidth,
                                                         double flopRate) {
  MachineModel machine;
  if (!path.empty()) {
    llvm::Expected<MachineModel> loaded = loadMachineModel(path);
    if (!loaded)
      return loaded.takeError();
    machine = std::move(*loaded);
  }
  if (linkLatency > 0)
    machine.linkLatencySeconds = linkLatency;
  if (linkBandwidth > 0)
    machine.linkBytesPerSecond = linkBandwidth;
  if (flopRate > 0)
    machine.flopsPerSecond = flopRate;
  return machine;
}

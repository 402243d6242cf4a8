//===- CollectiveExplain.cpp - explain's reshards and their consumers -----===//
//
// Every collective of the partitioned program with its bytes, as simulate
// runs it (after cleanup); then each reshard (the collectives one move
// emitted, which share one record) with the consumer that needed it, the
// layout the value had and the one wanted, and the consumer's chosen layout
// against its alternatives, as the partitioner recorded them
// (include/shardc/Transforms/ReshardRecord.h).
//
//===----------------------------------------------------------------------===//

#include "CollectiveExplain.h"

#include "shardc/Analysis/ReshardPlanner.h"
#include "shardc/Dialect/CollectiveOpInterface.h"
#include "shardc/Dialect/ShardingVerifier.h"
#include "shardc/Dialect/ValueNames.h"
#include "shardc/Transforms/ReshardRecord.h"

#include "llvm/Support/Format.h"

#include <string>
#include <vector>

using namespace mlir;
using namespace shardc;

namespace {

/// The name of the value `op` moves (through earlier collectives).
std::string movedName(func::FuncOp func, Operation *op) {
  Value moved = op->getOperand(0);
  while (isa_and_nonnull<CollectiveOpInterface>(moved.getDefiningOp()))
    moved = moved.getDefiningOp()->getOperand(0);
  std::string what;
  if (auto arg = dyn_cast<BlockArgument>(moved))
    what = getArgumentName(func, arg.getArgNumber());
  else
    what = getNameFromLoc(moved.getDefiningOp()->getLoc()).str();
  return what.empty() ? "<value>" : what;
}

std::string format(ShardingAttr s) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << s;
  return text;
}

/// "'shardc.add' h0_res1 at gpt_tiny.json:61:5, operand #1"
std::string describeConsumer(const ReshardRecord &r) {
  std::string op = "'" + r.op + "'" + (r.name.empty() ? "" : " " + r.name) +
                   (r.where.empty() ? "" : " at " + r.where);
  switch (r.kind) {
  case ReshardRecord::Consumer::Operand:
    return op + ", operand #" + std::to_string(r.index);
  case ReshardRecord::Consumer::Output:
    return "output #" + std::to_string(r.index) + ", annotated";
  case ReshardRecord::Consumer::Constraint:
    return op;
  case ReshardRecord::Consumer::OwnReduction:
    return op + ", its own max over a split reduced dim";
  }
  return op;
}

void printLayout(const PricedLayout &l, const PricedLayout &chosen) {
  llvm::outs() << "      " << l.label << ": ";
  if (!l.possible) {
    llvm::outs() << "no layout of the consumer takes it so\n";
    return;
  }
  llvm::outs() << llvm::format("%.3gs, %lld bytes", l.seconds,
                               (long long)l.bytes);
  if (&l != &chosen && l.seconds < chosen.seconds)
    llvm::outs() << " (cheaper than chosen)";
  if (l.moves.empty())
    llvm::outs() << ", moves nothing";
  for (auto [i, m] : llvm::enumerate(l.moves))
    llvm::outs() << (i ? "; " : ": ") << (m.value.empty() ? "<value>" : m.value)
                 << " " << m.collectives << " " << m.bytes;
  llvm::outs() << "\n";
}

void printRecord(const ReshardRecord &r, StringRef collectives,
                 size_t readers) {
  llvm::outs() << "  " << collectives << " " << r.value << ": for "
               << describeConsumer(r);
  if (readers > 1)
    llvm::outs() << " (and " << readers - 1 << " more "
                 << (readers > 2 ? "ops read" : "op reads") << " the moved value)";
  llvm::outs() << "\n";
  if (r.kind == ReshardRecord::Consumer::OwnReduction)
    llvm::outs() << "    each device holds the max of its block of "
                 << format(r.to) << "\n";
  else
    llvm::outs() << "    it was " << format(r.from) << "; it needs "
                 << format(r.to) << "\n";
  if (r.layouts.empty()) {
    llvm::outs() << "    (the program fixes this layout: no alternative)\n";
    return;
  }
  llvm::outs() << "    layouts of the consumer (est seconds, bytes each "
                  "device sends: the moves):\n";
  for (const PricedLayout &l : r.layouts)
    printLayout(l, r.layouts.front());
}

} // namespace

void shardc::printCollectives(func::FuncOp spmd) {
  llvm::outs() << "\nreshards (bytes each device sends):\n";
  int64_t total = 0, count = 0;
  // The reshards in program order: the first and last collectives of each
  // record, and the names of all that carry it.
  struct Reshard {
    Operation *first, *last;
    std::string collectives;
  };
  std::vector<Reshard> reshards;
  spmd.walk([&](Operation *op) {
    auto collective = dyn_cast<CollectiveOpInterface>(op);
    std::optional<ReshardStep> desc = describeCollective(op);
    if (!collective || !desc)
      return;
    auto in = cast<RankedTensorType>(op->getOperand(0).getType());
    int64_t bytes =
        in.getNumElements() * ((in.getElementTypeBitWidth() + 7) / 8);
    MeshOp mesh = lookupMesh(op, collective.getMeshAttr());
    int64_t groupSize = 1;
    for (StringRef a : desc->axes)
      groupSize *= mesh ? mesh.getAxisSize(a) : 1;
    CollectiveKind kind = collective.getCollectiveKind();
    std::string dims;
    if (kind == CollectiveKind::AllToAll)
      dims = " split_dim=" + std::to_string(desc->dim) +
             " concat_dim=" + std::to_string(desc->concatDim);
    else if (desc->dim >= 0)
      dims = " dim=" + std::to_string(desc->dim);
    int64_t sent = collective.getBytesSentPerDevice(groupSize, bytes);
    llvm::outs() << "  " << op->getName().stripDialect() << " "
                 << movedName(spmd, op) << " axes=" << collective.getAxes()
                 << dims << ": " << sent << " bytes\n";
    total += sent;
    ++count;
    Attribute record = op->getAttr(ShardcDialect::getReshardForAttrName());
    std::string name = op->getName().stripDialect().str();
    if (record && !reshards.empty() &&
        reshards.back().first->getAttr(
            ShardcDialect::getReshardForAttrName()) == record) {
      reshards.back().collectives += ", " + name;
      reshards.back().last = op;
    } else {
      reshards.push_back({op, op, name});
    }
  });
  llvm::outs() << "  total: " << count << " collectives, " << total
               << " bytes per device\n";
  if (reshards.empty())
    return;
  llvm::outs() << "\nwhy each reshard (the consumer that needed it; its "
                  "layouts priced as the partitioner prices them):\n";
  for (const Reshard &reshard : reshards) {
    std::optional<ReshardRecord> r = readReshardRecord(reshard.first);
    if (!r) {
      llvm::outs() << "  " << reshard.collectives << ": (not recorded)\n";
      continue;
    }
    // The move is made once for every consumer wanting that layout; the
    // record names the first.
    llvm::SmallPtrSet<Operation *, 4> readers;
    for (Operation *user : reshard.last->getResult(0).getUsers())
      readers.insert(user);
    printRecord(*r, reshard.collectives, readers.size());
  }
}

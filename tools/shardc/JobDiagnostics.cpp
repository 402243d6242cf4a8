//===- JobDiagnostics.cpp - one error message per mpirun job --------------===//

#include "JobDiagnostics.h"

#include "shardc/Runtime/MpiBackend.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <unistd.h>

using namespace shardc;

namespace {
struct Capture {
  int savedStderr = -1; ///< the real stderr while capturing
  std::FILE *file = nullptr;
  bool met = false;
};
Capture capture;

/// Open MPI's (and PMI's) variables that mpirun gives every rank.
std::optional<int> jobSize() {
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char *value = std::getenv(name)) {
      int size = 0;
      if (llvm::to_integer(value, size) && size > 0)
        return size;
    }
  return std::nullopt;
}

/// This process's rank in the job.
int jobRank() {
  for (const char *name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK"})
    if (const char *value = std::getenv(name)) {
      int rank = 0;
      if (llvm::to_integer(value, rank))
        return rank;
    }
  return 0;
}

/// Stops capturing; returns what was captured.
std::string stopCapturing() {
  llvm::errs().flush();
  std::fflush(stderr);
  std::string text;
  std::rewind(capture.file);
  char buffer[4096];
  while (size_t n = std::fread(buffer, 1, sizeof(buffer), capture.file))
    text.append(buffer, n);
  std::fclose(capture.file);
  capture.file = nullptr;
  dup2(capture.savedStderr, STDERR_FILENO);
  close(capture.savedStderr);
  capture.savedStderr = -1;
  return text;
}

/// `text` with "rank R: " before every line.
std::string prefixed(int rank, llvm::StringRef text) {
  std::string out;
  if (text.empty())
    return out;
  llvm::SmallVector<llvm::StringRef> lines;
  text.rtrim('\n').split(lines, '\n');
  for (llvm::StringRef line : lines)
    out += "rank " + std::to_string(rank) + ": " + line.str() + "\n";
  return out;
}
} // namespace

std::optional<int> shardc::mpirunRank() {
  if (!jobSize())
    return std::nullopt;
  return jobRank();
}

void shardc::startCapturingJobDiagnostics() {
  std::optional<int> size = jobSize();
  if (!size || *size < 2)
    return;
  capture.file = std::tmpfile();
  if (!capture.file)
    return; // no temporary file: every rank prints, as before
  llvm::errs().flush();
  capture.savedStderr = dup(STDERR_FILENO);
  dup2(fileno(capture.file), STDERR_FILENO);
  // A path that calls exit() before the ranks meet (--help, a fatal error)
  // still shows what it printed, on every rank as without capturing.
  std::atexit([] {
    if (capture.file && !capture.met) {
      std::string text = stopCapturing();
      (void)!write(STDERR_FILENO, text.data(), text.size());
    }
  });
}

bool shardc::meetRanks(bool failed) {
  if (!capture.file || capture.met)
    return true;
  capture.met = true;
  std::string mine = stopCapturing();
  // A rank's status travels as the first byte of its text.
  auto all = gatherTextFromEveryRank((failed ? "F" : "S") + mine);
  if (!all) {
    llvm::errs() << mine << "shardc: error: " << llvm::toString(all.takeError())
                 << "\n";
    return false;
  }
  bool anyFailed = false, same = true;
  for (const std::string &text : *all) {
    anyFailed |= text.front() == 'F';
    same &= text == all->front();
  }
  if (jobRank() == 0) {
    if (same) {
      llvm::errs() << llvm::StringRef(all->front()).drop_front();
    } else {
      for (size_t r = 0; r < all->size(); ++r)
        llvm::errs() << prefixed(static_cast<int>(r),
                                 llvm::StringRef((*all)[r]).drop_front());
    }
    llvm::errs().flush();
  }
  return !anyFailed;
}

int shardc::finishJobDiagnostics(int code) {
  if (!capture.file || capture.met)
    return code;
  int argc = 0;
  char **argv = nullptr;
  llvm::Expected<MpiEnvironment> job = initializeMpi(argc, argv);
  if (!job) {
    // Without MPI the ranks cannot meet: each prints its own.
    std::string mine = stopCapturing();
    llvm::errs() << mine;
    llvm::consumeError(job.takeError());
    return code;
  }
  return meetRanks(code != 0) ? code : 1;
}

bool shardc::startMpiForCommand(std::optional<MpiEnvironment> &mpi) {
  int argc = 0;
  char **argv = nullptr;
  llvm::Expected<MpiEnvironment> env = initializeMpi(argc, argv);
  if (!env) {
    llvm::errs() << "shardc: error: " << llvm::toString(env.takeError())
                 << "\n";
    return false;
  }
  mpi.emplace(std::move(*env));
  return true;
}

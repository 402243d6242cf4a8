//===- MpiLiveness.h - bounded waits and who is still there -----*- C++ -*-===//
//
// Private to lib/Runtime. MpiCommunicator waits for other ranks only
// through MpiLiveness::wait: a nonblocking operation's requests are polled
// (sleeping in between, so a waiting rank uses next to no CPU) until they
// complete or the timeout passes. Meanwhile the rank answers liveness
// queries from the others, on a communicator of its own: "which operation
// are you waiting in?". A rank that times out asks every rank; one that is
// stopped, killed, hung or computing does not answer, and the report names
// it.
//
//===----------------------------------------------------------------------===//

#ifndef SHARDC_LIB_RUNTIME_MPILIVENESS_H
#define SHARDC_LIB_RUNTIME_MPILIVENESS_H

#include "MpiSupport.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace shardc::detail {

/// How a wait ended: MPI's error code, or out of time.
struct PollResult {
  int code = MPI_SUCCESS;
  bool timedOut = false;
};

/// How long a wait tests without pausing before it starts sleeping
/// between tests: most waits end within it.
inline constexpr double kSpinSeconds = 1e-3;

/// Polls `requests` with MPI_Testall until they complete or `timeoutSeconds`
/// pass (0: never): without pause for `spinSeconds` (calling `idle` every
/// millisecond), then sleeping between tests and calling `idle` each time
/// round. For waits that cannot answer liveness queries (a send's future,
/// which may outlive its communicator), and under MpiLiveness::wait.
PollResult pollForSeconds(llvm::MutableArrayRef<MPI_Request> requests,
                          MPI_Status *statuses, double timeoutSeconds,
                          llvm::function_ref<void()> idle,
                          double spinSeconds = kSpinSeconds);

/// "2", "0.5": seconds as the user wrote them.
std::string formatSeconds(double seconds);

class MpiLiveness {
public:
  MpiLiveness() = default;
  MpiLiveness(const MpiLiveness &) = delete;
  MpiLiveness &operator=(const MpiLiveness &) = delete;

  /// Duplicates MPI_COMM_WORLD for the queries. Collective. Returns MPI's
  /// error code.
  int create();
  /// Frees the communicator (MPI must still be running).
  void free();

  /// Waits for `requests`, the parts of the operation `what()` describes,
  /// answering liveness queries meanwhile; gives up after `timeoutSeconds`
  /// (0: never).
  /// `spinSeconds` as pollForSeconds takes it.
  PollResult wait(llvm::MutableArrayRef<MPI_Request> requests,
                  MPI_Status *statuses, double timeoutSeconds,
                  llvm::function_ref<std::string()> what,
                  double spinSeconds = kSpinSeconds);

  /// After a wait in `what` timed out: asks every rank what it waits in,
  /// and returns the report, naming the ranks that do not answer. Clears
  /// `speak` if a lower rank answered: it timed out too (or will), and
  /// reports the same, so this one should wait for its MPI_Abort
  /// (waitForLowerRankToReport) rather than add a second report.
  std::string diagnoseTimeout(const std::string &what, double timeoutSeconds,
                              bool &speak);
  /// Keeps answering queries for as long as a lower rank needs to time out
  /// and report.
  void waitForLowerRankToReport(double timeoutSeconds);

private:
  void answerQueries();
  /// A member waiting in a poll loop answers within a millisecond or two;
  /// the grace only has to cover a loaded machine's scheduling delays.
  static double graceSeconds(double timeoutSeconds);

  static constexpr int kAnswerLength = 256;
  struct Answer {
    std::array<char, kAnswerLength> text{};
    MPI_Request request = MPI_REQUEST_NULL;
  };

  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, size = 1;
  /// The waits this rank has entered. Every rank of an SPMD program makes
  /// the same sequence of them, so the numbers say how far each got.
  uint64_t waits = 0;
  /// What this rank waits in, while it does: answers quote it.
  llvm::function_ref<std::string()> *waitingIn = nullptr;
  /// The wait that timed out, which answers quote after it has returned.
  std::string timedOutIn = "nothing";
  /// Answers in flight (MPI reads their text until they are done).
  std::vector<std::unique_ptr<Answer>> answers;
};

} // namespace shardc::detail

#endif // SHARDC_LIB_RUNTIME_MPILIVENESS_H

//===- MpiLiveness.cpp - bounded waits and who is still there -------------===//

#include "MpiLiveness.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <thread>

using namespace shardc::detail;
using llvm::ArrayRef;

/// Liveness queries carry the asker's wait number; answers are
/// "<wait number> <what the rank waits in>", NUL-terminated.
static constexpr int kQueryTag = 1;
static constexpr int kAnswerTag = 2;

using Clock = std::chrono::steady_clock;

static std::optional<Clock::time_point> deadlineAfter(double seconds) {
  // 0 waits forever, and so does anything past a century, which the
  // clock's arithmetic could not represent.
  if (seconds <= 0 || seconds > 3e9)
    return std::nullopt;
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(seconds));
}

std::string shardc::detail::formatSeconds(double seconds) {
  std::string out;
  llvm::raw_string_ostream(out) << llvm::format("%g", seconds);
  return out;
}

/// Waits for `requests` without occupying a core for long: MPI_Testall
/// (which also drives MPI's progress) in a tight loop for the first
/// `spinSeconds` (a millisecond unless the caller knows the transfer takes
/// longer), as MPI_Waitall would, since most waits end that soon; then
/// with sleeps between tests, calling `idle` each time round. A blocking MPI
/// call would spin at 100% CPU for as long as the slowest rank takes. The
/// pauses start at a microsecond and double up to half a millisecond, or a
/// fiftieth of the time waited so far (at most 20 ms): a long wait costs
/// next to no CPU, and finishes at most 2% late. With more ranks than cores
/// the sleeping ranks leave the cores to those still computing, which makes
/// a step faster than blocking calls do (bench: docs/mpi.md).
///
/// Open MPI moves a large message over shared memory only inside MPI
/// calls (a few fragments per test), so a transfer polled with sleeps
/// crawls: callers that know every member is there (MpiCommunicator's
/// large collectives meet first) spin for as long as the bytes take.
PollResult
shardc::detail::pollForSeconds(llvm::MutableArrayRef<MPI_Request> requests,
                               MPI_Status *statuses, double timeoutSeconds,
                               llvm::function_ref<void()> idle,
                               double spinSeconds) {
  using std::chrono::microseconds;
  constexpr microseconds kIdleEvery(1000), kShortPause(500),
      kLongestPause(20000);
  auto spinTime = std::chrono::duration_cast<microseconds>(
      std::chrono::duration<double>(std::max(spinSeconds, 0.0)));
  std::optional<Clock::time_point> deadline = deadlineAfter(timeoutSeconds);
  Clock::time_point start = Clock::now();
  microseconds pause(1), lastIdle(0);
  while (true) {
    int done = 0;
    int rc = MPI_Testall(static_cast<int>(requests.size()), requests.data(),
                         &done, statuses);
    if (rc != MPI_SUCCESS || done)
      return {rc, false};
    Clock::time_point now = Clock::now();
    auto waited = std::chrono::duration_cast<microseconds>(now - start);
    // Spinning, MPI_Testall yields the core to other processes by itself
    // (mpi_yield_when_idle, docs/mpi.md).
    if (waited < spinTime) {
      // A long spin still answers liveness queries and keeps the timeout.
      if (waited - lastIdle >= kIdleEvery) {
        lastIdle = waited;
        idle();
        if (deadline && now >= *deadline)
          return {MPI_SUCCESS, true};
      }
      continue;
    }
    idle();
    if (deadline && now >= *deadline)
      return {MPI_SUCCESS, true};
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2,
                     std::clamp(waited / 50, kShortPause, kLongestPause));
  }
}

int MpiLiveness::create() {
  int rc = MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rc == MPI_SUCCESS)
    rc = MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rc == MPI_SUCCESS)
    rc = MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  if (rc == MPI_SUCCESS)
    rc = MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  return rc;
}

void MpiLiveness::free() {
  // Answers still in flight went to a rank that timed out, which ends the
  // job; nobody waits for them.
  for (std::unique_ptr<Answer> &a : answers)
    if (a->request != MPI_REQUEST_NULL)
      MPI_Request_free(&a->request);
  if (comm != MPI_COMM_NULL)
    MPI_Comm_free(&comm);
}

PollResult MpiLiveness::wait(llvm::MutableArrayRef<MPI_Request> requests,
                             MPI_Status *statuses, double timeoutSeconds,
                             llvm::function_ref<std::string()> what,
                             double spinSeconds) {
  ++waits;
  waitingIn = &what;
  PollResult result = pollForSeconds(
      requests, statuses, timeoutSeconds, [&] { answerQueries(); },
      spinSeconds);
  waitingIn = nullptr;
  return result;
}

void MpiLiveness::answerQueries() {
  // Errors here concern a rank that is gone or going, which its own
  // report or mpirun names; answering is best effort.
  llvm::erase_if(answers, [](std::unique_ptr<Answer> &a) {
    int done = 0;
    return MPI_Test(&a->request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS ||
           done;
  });
  while (true) {
    int arrived = 0;
    MPI_Status status;
    if (MPI_Iprobe(MPI_ANY_SOURCE, kQueryTag, comm, &arrived, &status) !=
            MPI_SUCCESS ||
        !arrived)
      return;
    uint64_t theirWait = 0;
    if (MPI_Recv(&theirWait, 1, MPI_UINT64_T, status.MPI_SOURCE, kQueryTag,
                 comm, MPI_STATUS_IGNORE) != MPI_SUCCESS)
      return;
    auto answer = std::make_unique<Answer>();
    std::string text =
        std::to_string(waits) + " " + (waitingIn ? (*waitingIn)() : timedOutIn);
    size_t length = std::min<size_t>(text.size(), kAnswerLength - 1);
    std::memcpy(answer->text.data(), text.data(), length);
    if (MPI_Isend(answer->text.data(), static_cast<int>(length + 1), MPI_CHAR,
                  status.MPI_SOURCE, kAnswerTag, comm,
                  &answer->request) == MPI_SUCCESS)
      answers.push_back(std::move(answer));
  }
}

double MpiLiveness::graceSeconds(double timeoutSeconds) {
  return std::clamp(timeoutSeconds / 4, 1.0, 10.0);
}

std::string MpiLiveness::diagnoseTimeout(const std::string &what,
                                         double timeoutSeconds, bool &speak) {
  timedOutIn = what;
  // Everyone is asked, not only the members of this operation: a member
  // may wait for a rank outside it (a stalled rank blocks its own groups,
  // which block theirs), and the report should name the rank at the root.
  struct Query {
    int rank;
    std::array<char, kAnswerLength> answer{};
    MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    bool answered = false;
  };
  std::vector<Query> queries;
  for (int r = 0; r < size; ++r)
    if (r != rank)
      queries.push_back(Query{r});
  for (Query &q : queries)
    if (MPI_Isend(&waits, 1, MPI_UINT64_T, q.rank, kQueryTag, comm,
                  &q.requests[0]) != MPI_SUCCESS ||
        MPI_Irecv(q.answer.data(), kAnswerLength, MPI_CHAR, q.rank, kAnswerTag,
                  comm, &q.requests[1]) != MPI_SUCCESS)
      q.requests[1] = MPI_REQUEST_NULL; // counts as no answer
  auto allAnswered = [&] {
    bool all = true;
    for (Query &q : queries) {
      int done = 0;
      if (!q.answered && q.requests[1] != MPI_REQUEST_NULL &&
          MPI_Test(&q.requests[1], &done, MPI_STATUS_IGNORE) == MPI_SUCCESS &&
          done)
        q.answered = true;
      all = all && q.answered;
    }
    return all;
  };
  std::optional<Clock::time_point> end =
      deadlineAfter(graceSeconds(timeoutSeconds));
  while (!allAnswered() && end && Clock::now() < *end) {
    answerQueries();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }

  // The ranks that answered, grouped by what they wait in, in rank order.
  llvm::SmallVector<std::string> silent;
  std::vector<std::pair<std::string, llvm::SmallVector<std::string>>> waiting;
  speak = true;
  for (Query &q : queries) {
    if (!q.answered) {
      silent.push_back(std::to_string(q.rank));
      continue;
    }
    speak = speak && q.rank > rank;
    q.answer.back() = '\0';
    auto [theirWait, theirWhat] = llvm::StringRef(q.answer.data()).split(' ');
    std::string where = theirWhat.str() + " (wait #" + theirWait.str() + ")";
    auto it = llvm::find_if(waiting, [&](auto &w) { return w.first == where; });
    if (it == waiting.end())
      it = waiting.insert(it, {where, {}});
    it->second.push_back(std::to_string(q.rank));
  }
  auto ranks = [](llvm::ArrayRef<std::string> list) {
    return std::string(list.size() == 1 ? "rank " : "ranks ") +
           llvm::join(list, ", ");
  };
  std::string text = "timed out after " + formatSeconds(timeoutSeconds) +
                     " s waiting in " + what + " (wait #" +
                     std::to_string(waits) + " of this rank): ";
  if (!silent.empty())
    text += ranks(silent) + (silent.size() == 1 ? " does" : " do") +
            " not answer (stopped, killed, hung, or busy outside MPI for "
            "longer than the timeout)";
  else
    text += "every rank answers, but they wait in operations that do not "
            "match: the ranks' programs disagree";
  for (auto &[theirWhat, list] : waiting)
    text += "; " + ranks(list) + " wait" + (list.size() == 1 ? "s" : "") +
            " in " + theirWhat;
  return text;
}

void MpiLiveness::waitForLowerRankToReport(double timeoutSeconds) {
  std::optional<Clock::time_point> end =
      deadlineAfter(timeoutSeconds + graceSeconds(timeoutSeconds));
  while (end && Clock::now() < *end) {
    answerQueries();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

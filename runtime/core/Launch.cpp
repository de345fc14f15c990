//===- Launch.cpp - one process a GPU for data-parallel training ----------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Launch.h"

#include "Collective.h"
#include "Failure.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace mlir::mxfp4::runtime {

/// A signal the launcher got, to pass on to its ranks.
static volatile sig_atomic_t pendingSignal = 0;

static void recordSignal(int signal) { pendingSignal = signal; }

/// `name`'s value as a count, or -1 if it is unset.
static long getCount(const char *name) {
  const char *value = std::getenv(name);
  if (!value)
    return -1;
  char *end = nullptr;
  long n = std::strtol(value, &end, 10);
  if (!*value || *end || n < 0 || n > 1 << 20)
    fail(std::string(name) + "='" + value + "' is not a count");
  return n;
}

std::optional<RankEnvironment> getRankEnvironment() {
  long rank = getCount("MXFP4_RANK"), ranks = getCount("MXFP4_RANKS");
  const char *id = std::getenv("MXFP4_NCCL_ID");
  if (rank < 0 && ranks < 0 && !id)
    return std::nullopt;
  if (rank < 0 || ranks < 1 || !id || rank >= ranks)
    fail("a rank needs MXFP4_RANK (below MXFP4_RANKS), MXFP4_RANKS and "
         "MXFP4_NCCL_ID set together, as `train --gpus=N` sets them");
  RankEnvironment e;
  e.rank = int(rank);
  e.ranks = int(ranks);
  long local = getCount("MXFP4_LOCAL_RANK");
  e.localRank = local < 0 ? e.rank : int(local);
  e.uniqueId = id;
  return e;
}

/// How a rank ended, in words.
static std::string describeStatus(int status) {
  if (WIFEXITED(status))
    return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "was killed by signal " + std::to_string(WTERMSIG(status));
  return "ended with wait status " + std::to_string(status);
}

int launchRanks(char **argv, int ranks, const std::string &library) {
  // Before any process starts: a missing or old library is one message.
  std::string id = makeUniqueId(library);
  std::fflush(stdout);
  std::fflush(stderr);
  struct sigaction action = {}, oldInt = {}, oldTerm = {};
  action.sa_handler = recordSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &oldInt);
  sigaction(SIGTERM, &action, &oldTerm);

  std::vector<pid_t> pids(ranks, -1);
  auto stopAll = [&](int signal) {
    for (pid_t pid : pids)
      if (pid > 0)
        kill(pid, signal);
  };
  std::string failure;
  for (int r = 0; r < ranks && failure.empty(); ++r) {
    pid_t pid = fork();
    if (pid < 0) {
      failure = "cannot start rank " + std::to_string(r) + ": fork failed";
      break;
    }
    if (pid == 0) {
      sigaction(SIGINT, &oldInt, nullptr);
      sigaction(SIGTERM, &oldTerm, nullptr);
      setenv("MXFP4_RANK", std::to_string(r).c_str(), 1);
      setenv("MXFP4_RANKS", std::to_string(ranks).c_str(), 1);
      setenv("MXFP4_NCCL_ID", id.c_str(), 1);
      unsetenv("MXFP4_LOCAL_RANK");
      setenv("NCCL_NVLS_ENABLE", "0", 1);
      if (r > 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0)
          dup2(null, STDOUT_FILENO);
      }
      execv("/proc/self/exe", argv);
      std::fprintf(stderr, "rank %d: cannot start '/proc/self/exe'\n", r);
      _exit(127);
    }
    pids[r] = pid;
  }

  // Wait for every rank; the first that fails stops the others.
  int running = 0;
  for (pid_t pid : pids)
    running += pid > 0;
  using Clock = std::chrono::steady_clock;
  std::optional<Clock::time_point> stopAt, killAt;
  // Once a rank failed, the others still running are stopped (signalled).
  bool signalled = !failure.empty();
  int stopped = 0;
  if (signalled) {
    stopAll(SIGTERM);
    killAt = Clock::now() + std::chrono::seconds(10);
  }
  int forwarded = 0;
  while (running > 0) {
    if (pendingSignal && pendingSignal != forwarded) {
      forwarded = pendingSignal;
      stopAll(forwarded);
      if (failure.empty())
        failure = "the launcher got signal " + std::to_string(forwarded);
      signalled = true;
      killAt = Clock::now() + std::chrono::seconds(10);
    }
    int status = 0;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid <= 0) {
      if (stopAt && !signalled && Clock::now() > *stopAt) {
        signalled = true;
        stopAll(SIGTERM);
        killAt = Clock::now() + std::chrono::seconds(10);
      }
      if (killAt && Clock::now() > *killAt) {
        stopAll(SIGKILL);
        killAt.reset();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    int r = 0;
    while (r < ranks && pids[r] != pid)
      ++r;
    if (r == ranks)
      continue;
    pids[r] = -1;
    --running;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
      continue;
    // In the order they ended, until the launcher stops the rest: a rank
    // whose peer failed may notice it first and end before the rank that
    // caused it, so both are named.
    if (!signalled)
      failure += (failure.empty() ? "" : ", then ") + std::string("rank ") +
                 std::to_string(r) + " " + describeStatus(status);
    else
      ++stopped;
    if (!stopAt && !signalled)
      stopAt = Clock::now() + std::chrono::milliseconds(500);
  }
  sigaction(SIGINT, &oldInt, nullptr);
  sigaction(SIGTERM, &oldTerm, nullptr);
  if (!failure.empty())
    fail("the data-parallel job of " + std::to_string(ranks) +
         " ranks failed: " + failure +
         (stopped ? "; " + std::to_string(stopped) +
                        (stopped == 1 ? " other rank was" : " other ranks were") +
                        " stopped"
                  : std::string()) +
         " (each rank's error is above)");
  return 0;
}

} // namespace mlir::mxfp4::runtime

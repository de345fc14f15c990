//===- Launch.h - one process a GPU for data-parallel training --*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `train --gpus=N` starts N copies of the runtime, rank r on GPU r, and
// waits for them. The launcher makes the job's NCCL unique id and hands
// each copy its place in the environment:
//
//   MXFP4_RANK=r  MXFP4_RANKS=N  MXFP4_NCCL_ID=<256 hexadecimal digits>
//   NCCL_NVLS_ENABLE=0   (NVLink multicast stays off on shared machines)
//
// Any other launcher that sets the first three (and MXFP4_LOCAL_RANK, the
// GPU's ordinal on its host, where it differs from the rank) starts ranks
// the same way. Only rank 0 writes the output folder and prints the steps;
// the others print only their errors. When a rank fails, the launcher stops
// the others (SIGTERM, then SIGKILL after 10 s) and fails naming it: the
// checkpoint rank 0 last published stays whole (checkpoints are published
// by a rename).
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_RUNTIME_CORE_LAUNCH_H
#define MXFP4_RUNTIME_CORE_LAUNCH_H

#include <optional>
#include <string>

namespace mlir::mxfp4::runtime {

/// This process's place in a job, from the launcher's environment.
struct RankEnvironment {
  int rank = 0, ranks = 1;
  /// The GPU's ordinal on this host.
  int localRank = 0;
  /// makeUniqueId's text.
  std::string uniqueId;
};

/// The environment's job, if a launcher started this process as a rank;
/// fails if it is set but malformed.
std::optional<RankEnvironment> getRankEnvironment();

/// Starts `ranks` copies of this program with its command line `argv`, each
/// as one rank, and waits for them; `library` is the collective library
/// (Collective.h) that makes the job's id. Returns 0 when every rank
/// succeeded, else fails naming the first rank that did not.
int launchRanks(char **argv, int ranks, const std::string &library);

} // namespace mlir::mxfp4::runtime

#endif // MXFP4_RUNTIME_CORE_LAUNCH_H

//===- Collective.h - NCCL / RCCL, loaded at run time -----------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The collectives of data-parallel training, on the collective library of
// the GPU's vendor: NCCL (libnccl.so.2) for the CUDA runtime, RCCL
// (librccl.so, NCCL's API) for the HIP runtime, loaded with dlopen so that
// the runtimes build and run on one GPU without it. MXFP4_NCCL_LIBRARY
// names another file (a path, or a name the loader searches).
//
// The ranks of a job share a unique id that rank 0's launcher makes
// (makeUniqueId) and hands each rank as hexadecimal text (Launch.h).
// Collectives are queued on the device's default stream, after the kernels
// queued before them and before those queued after.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_RUNTIME_CORE_COLLECTIVE_H
#define MXFP4_RUNTIME_CORE_COLLECTIVE_H

#include "Device.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace mlir::mxfp4::runtime {

/// The file dlopen is given for `vendorLibrary` (MXFP4_NCCL_LIBRARY when it
/// is set).
std::string getCollectiveLibrary(const std::string &vendorLibrary);

/// A new unique id of a job, as hexadecimal text; fails with a message that
/// names the library if it cannot be loaded. The library stays loaded in
/// this process, which must live until the ranks have joined: NCCL serves
/// their bootstrap from a thread of the process that made the id.
std::string makeUniqueId(const std::string &library);

/// This process's rank in a job of `ranks` processes.
class Communicator {
public:
  enum class Reduction { Sum, Average, Max, Min };
  /// The library's functions (Collective.cpp).
  struct Api;

  /// Joins the job of `uniqueId` (makeUniqueId's text) as `rank`; waits for
  /// the others.
  Communicator(const std::string &library, int ranks, int rank,
               const std::string &uniqueId);
  ~Communicator();
  Communicator(const Communicator &) = delete;
  Communicator &operator=(const Communicator &) = delete;

  int getRank() const { return rank; }
  int getRanks() const { return ranks; }

  /// Reduces `count` f32 values at `buffer` over the ranks, in place.
  void allReduceF32(DevicePtr buffer, size_t count, Reduction reduction);
  /// Reduces `count` u64 values at `buffer` over the ranks, in place.
  void allReduceU64(DevicePtr buffer, size_t count, Reduction reduction);
  /// Reduces `count` f32 values at `send` of every rank and leaves rank r
  /// the r-th `count` of the result at `receive` (`receive` may be `send`'s
  /// own piece, `send` + r * count * 4).
  void reduceScatterF32(DevicePtr send, DevicePtr receive, size_t count,
                        Reduction reduction);
  /// Gathers every rank's `count` f32 values at `send` into `receive`, rank
  /// r's at `receive` + r * count * 4 (`send` may be that piece).
  void allGatherF32(DevicePtr send, DevicePtr receive, size_t count);
  /// Collectives between beginGroup and endGroup are launched as one.
  void beginGroup();
  void endGroup();

private:
  void check(int result, const std::string &what);

  Api *api = nullptr;
  void *handle = nullptr;
  void *comm = nullptr;
  int ranks = 1, rank = 0;
  std::string library;
};

} // namespace mlir::mxfp4::runtime

#endif // MXFP4_RUNTIME_CORE_COLLECTIVE_H

//===- RunLock.h - one trainer a run folder, without LLVM -------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The lock a trainer holds on its run folder (--out) while it writes there,
// so that a second process training into the same folder stops with an
// error naming the holder instead of interleaving metrics and racing on
// checkpoints. The CPU trainer and the GPU runtimes take it the same way.
//
// The lock is an advisory `flock` on `DIR/.lock`, whose text is the holder's
// process id and host. The system drops it when the holder exits, however
// it exits (kill -9 included), so a dead process never leaves a stale lock;
// the file itself stays (removing it could let two processes lock two
// different files of that name).
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_FORMATS_RUNLOCK_H
#define MXFP4_FORMATS_RUNLOCK_H

#include <string>

namespace mlir::mxfp4 {

/// The name of the lock file in a run folder.
inline constexpr const char *kRunLockFile = ".lock";

/// This process's hold on a run folder; released when destroyed.
class RunFolderLock {
public:
  RunFolderLock() = default;
  RunFolderLock(RunFolderLock &&other) noexcept : fd(other.fd) {
    other.fd = -1;
  }
  RunFolderLock &operator=(RunFolderLock &&other) noexcept;
  RunFolderLock(const RunFolderLock &) = delete;
  RunFolderLock &operator=(const RunFolderLock &) = delete;
  ~RunFolderLock();

  /// Locks the existing folder `dir` for this process. Returns "" on
  /// success, else the reason, e.g. "'runs/a' is being trained into by
  /// process 123 on host h (runs/a/.lock); wait for it to end or choose
  /// another --out".
  std::string acquire(const std::string &dir);

private:
  void release();

  int fd = -1;
};

/// What every trainer does first with its run folder `dir`: creates it,
/// takes `lock` on it, and puts back what a killed checkpoint writer left in
/// `dir/checkpoint` (recoverCheckpointFolder, mxfp4/Formats/Checkpoint.h).
/// Returns what went wrong, or an empty string.
std::string openRunFolder(const std::string &dir, RunFolderLock &lock);

} // namespace mlir::mxfp4

#endif // MXFP4_FORMATS_RUNLOCK_H

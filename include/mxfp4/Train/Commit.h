//===- Commit.h - the commit the tools were built from ----------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Every result (a compiled step, a training run's metrics, a study table)
// names the compiler that produced it, so that a table can be traced to one
// commit and regenerated when the compiler changes.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_TRAIN_COMMIT_H
#define MXFP4_TRAIN_COMMIT_H

namespace mlir::mxfp4 {

/// The git commit of the source tree this build came from: 12 hex digits,
/// with "-dirty" when tracked files differed from it, or "unknown" when the
/// tree was not a git checkout.
const char *getBuildCommit();

} // namespace mlir::mxfp4

#endif // MXFP4_TRAIN_COMMIT_H

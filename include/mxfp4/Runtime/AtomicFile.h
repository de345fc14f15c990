//===- AtomicFile.h - replace files whole or not at all ---------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Every file the tools write for later runs (checkpoints, metrics, plots,
// token caches, downloads) goes through here, so a failure or a crash never
// leaves a half-written file where a good one was.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_RUNTIME_ATOMICFILE_H
#define MXFP4_RUNTIME_ATOMICFILE_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace mlir::mxfp4 {

/// Replaces the file at `path` by what `write` writes, so that a failure (of
/// `write`, of the disk, or a crash) leaves the previous file intact: the
/// bytes go to a unique temporary file in the same folder, which is flushed
/// to disk and then renamed over `path`. Errors name `path`.
llvm::Error
writeFileAtomically(llvm::StringRef path,
                    llvm::function_ref<llvm::Error(llvm::raw_ostream &)> write);

/// Same, for `contents`; creates the parent folder first.
llvm::Error writeFileAtomically(llvm::StringRef path,
                                llvm::StringRef contents);

/// Makes renames in `dir` durable (fsync of the folder); best effort.
void syncDirectory(llvm::StringRef dir);

} // namespace mlir::mxfp4

#endif // MXFP4_RUNTIME_ATOMICFILE_H

//===- FuzzTarget.h - what every fuzz target shares -------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The fuzz targets feed outside bytes to the readers of lib/Formats (the
// files a trainer or runtime reads: .npy, safetensors, JSON configs and
// trainer states, metrics, run manifests, host plans) and to what reads
// folder trees (a checkpoint folder, what a killed writer left beside it),
// decoded from the bytes into a folder of their own. A reader may refuse
// its input, with a message; it must not crash, hang or read out of bounds
// (AddressSanitizer and UndefinedBehaviorSanitizer are on). Where a format
// has a writer, what was read must also survive writing and reading again:
// `requireSame` aborts (a finding) when it does not.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_FUZZ_FUZZTARGET_H
#define MXFP4_FUZZ_FUZZTARGET_H

#include <cstdio>
#include <cstdlib>
#include <string>

namespace mlir::mxfp4::fuzz {

/// Aborts with `what` unless `ok`: an invariant of the reader failed.
inline void require(bool ok, const char *what, const std::string &detail) {
  if (ok)
    return;
  std::fprintf(stderr, "fuzz target invariant failed: %s: %s\n", what,
               detail.c_str());
  std::abort();
}

} // namespace mlir::mxfp4::fuzz

#endif // MXFP4_FUZZ_FUZZTARGET_H

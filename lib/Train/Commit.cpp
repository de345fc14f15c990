//===- Commit.cpp - the commit the tools were built from ------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Train/Commit.h"

// Written at every build by cmake/Commit.cmake; only this file includes it,
// so a new commit recompiles one file.
#include "mxfp4/Train/CommitId.inc"

const char *mlir::mxfp4::getBuildCommit() { return MXFP4_COMMIT; }

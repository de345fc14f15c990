//===- HostPlan.h - a module's host functions as a plan ---------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The host functions of a program lowered for a GPU, read from MLIR into the
// plan structures of mxfp4/Formats/HostPlan.h, which also holds the plan's
// text format: formatHostPlan writes what runtime/ replays, and
// HostLibrary.h compiles the same structures to machine code.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_API_HOSTPLAN_H
#define MXFP4_API_HOSTPLAN_H

#include "mxfp4/Formats/HostPlan.h"

#include "llvm/Support/Error.h"

#include <vector>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace mlir::mxfp4 {

/// Reads every public host function of `module`; an op outside the plan's
/// vocabulary is a located error. With `subviewsAsViews`, a memref.subview
/// becomes a view of its whole source (its offset dropped): right for the
/// plan's allocations, lifetimes and launches, which models need (the gfx950
/// step model), wrong for running it.
llvm::Expected<std::vector<HostFunction>>
buildHostPlan(ModuleOp module, bool subviewsAsViews = false);

} // namespace mlir::mxfp4

#endif // MXFP4_API_HOSTPLAN_H

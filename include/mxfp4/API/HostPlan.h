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
/// vocabulary is a located error. A static memref.subview is a view of its
/// source: kernels take buffers as bare pointers, and a subview's offset and
/// strides are in the type the kernel receives, which applies them, so the
/// kernel is passed the source's address.
llvm::Expected<std::vector<HostFunction>> buildHostPlan(ModuleOp module);

} // namespace mlir::mxfp4

#endif // MXFP4_API_HOSTPLAN_H

//===- HostPlan.h - the host function as a replayable plan ------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The host functions of a program lowered for a GPU are straight-line:
// allocations, frees, reshapes, constants, constant globals and launches.
// This writes them as text a small runtime without LLVM replays
// (runtime/cuda). Format, one record per line, `#` comments:
//
//   function NAME ARGS RESULTS
//   arg I buffer ID BYTES TYPE DIMS...  | arg I scalar ID BYTES
//   alloc ID BYTES               | free ID
//   view ID SOURCE               (a reshape or cast: the same bytes)
//   const ID BYTES HEXBITS       (little-endian scalar)
//   global ID BYTES HEXDATA
//   launch KERNEL GX GY GZ BX BY BZ ARG...   (ARG: bID or sID)
//   result I ID BYTES TYPE DIMS...      (TYPE: f32 bf16 i32 i64 u8 bytes)
//   end
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_API_HOSTPLAN_H
#define MXFP4_API_HOSTPLAN_H

#include "llvm/Support/Error.h"

#include <string>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace mlir::mxfp4 {

/// Writes every public host function of `module`; an op outside the plan's
/// vocabulary is a located error.
llvm::Expected<std::string> serializeHostPlan(ModuleOp module);

} // namespace mlir::mxfp4

#endif // MXFP4_API_HOSTPLAN_H

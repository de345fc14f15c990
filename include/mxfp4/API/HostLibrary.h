//===- HostLibrary.h - a plan's host functions as a library -----*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The host functions of a plan (mxfp4/Formats/HostPlan.h) compiled ahead
// of time: one C function per host function that makes the plan's
// allocations, uploads, launches and frees through the runtime's callbacks,
// with the cubin and the plan's text inside, as host.so (the C ABI is
// HostABI.h). A runtime then calls machine code instead of interpreting the
// plan.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_API_HOSTLIBRARY_H
#define MXFP4_API_HOSTLIBRARY_H

#include "mxfp4/Formats/HostPlan.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace mlir::mxfp4 {

/// `plan` as a relocatable object for the compiling machine's triple, with
/// its generic CPU (the library runs on another machine of the same kind),
/// position independent. `manifest` is the plan's text.
llvm::Expected<std::string> emitHostObject(llvm::ArrayRef<HostFunction> plan,
                                           llvm::StringRef manifest,
                                           llvm::ArrayRef<uint8_t> cubin);

/// Links `object` into the shared library `path` with ld.lld (GpuCompile.h's
/// findLdLld). A library left at `path` by an earlier compile is removed
/// first, so a failure leaves none that disagrees with the plan.
llvm::Error linkHostLibrary(llvm::StringRef object, llvm::StringRef path);

} // namespace mlir::mxfp4

#endif // MXFP4_API_HOSTLIBRARY_H

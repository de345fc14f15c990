//===- CallArguments.h - check and convert call arguments -------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_LIB_API_CALLARGUMENTS_H
#define MXFP4_LIB_API_CALLARGUMENTS_H

#include "mxfp4/API/CpuRunner.h"

namespace mlir::mxfp4 {

/// Checks `argument` against the parameter of type `param` (argument
/// #`index`) and returns what the lowered function takes: a copy of the
/// array for a tensor, a 0-d array holding the value for a scalar.
llvm::Expected<HostArray> convertArgument(const ValueType &param,
                                          const CallArgument &argument,
                                          unsigned index);

/// Checks that values of `type` (result #`index`) can be returned to the
/// host, and returns a zero-filled array to receive one.
llvm::Expected<HostArray> allocateResult(const ValueType &type, unsigned index);

} // namespace mlir::mxfp4

#endif // MXFP4_LIB_API_CALLARGUMENTS_H

//===- PackedCall.h - calls through invokePacked ----------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_LIB_API_PACKEDCALL_H
#define MXFP4_LIB_API_PACKEDCALL_H

#include "mxfp4/Runtime/HostArray.h"

#include "llvm/Support/Error.h"

namespace mlir {
class ExecutionEngine;
} // namespace mlir

namespace mlir::mxfp4 {

/// One operand of `_mlir_ciface_f`: an array passed as a pointer to a strided
/// memref descriptor (tensor arguments and the out-parameters of tensor
/// results), or a 0-d array holding a scalar passed by value.
struct PackedOperand {
  HostArray *array;
  bool isTensor;
};

/// Calls `_mlir_ciface_<function>` of `engine` on `operands` (the arguments,
/// then one out-parameter per tensor result) and stores its scalar results,
/// returned by value, into the 0-d arrays `scalarResults`.
llvm::Error callPacked(ExecutionEngine &engine, llvm::StringRef function,
                       llvm::ArrayRef<PackedOperand> operands,
                       llvm::ArrayRef<HostArray *> scalarResults);

} // namespace mlir::mxfp4

#endif // MXFP4_LIB_API_PACKEDCALL_H

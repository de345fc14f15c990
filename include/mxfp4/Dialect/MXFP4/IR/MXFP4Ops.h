//===- MXFP4Ops.h - mxfp4 operations ----------------------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_DIALECT_MXFP4_IR_MXFP4OPS_H
#define MXFP4_DIALECT_MXFP4_IR_MXFP4OPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mxfp4/Dialect/MXFP4/IR/MXFP4Dialect.h"

#define GET_OP_CLASSES
#include "mxfp4/Dialect/MXFP4/IR/MXFP4Ops.h.inc"

namespace mlir::mxfp4 {

/// The only block size MXFP4 defines (OCP MX v1.0, Table 1).
constexpr int64_t kBlockSize = 32;

/// Returns true if `size` is a Hadamard tile size the dialect supports.
bool isSupportedHadamardSize(int64_t size);

} // namespace mlir::mxfp4

#endif // MXFP4_DIALECT_MXFP4_IR_MXFP4OPS_H

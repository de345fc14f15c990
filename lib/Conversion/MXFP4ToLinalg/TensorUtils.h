//===- TensorUtils.h - shape helpers for the mxfp4 lowerings ----*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_LIB_CONVERSION_MXFP4TOLINALG_TENSORUTILS_H
#define MXFP4_LIB_CONVERSION_MXFP4TOLINALG_TENSORUTILS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"

namespace mlir::mxfp4 {

/// Splits dimension `axis` of `tensor` into [size / tile, tile].
Value expandAxis(OpBuilder &b, Location loc, Value tensor, int64_t axis,
                 int64_t tile);

/// Merges dimensions `axis` and `axis + 1` of `tensor`.
Value collapseAxis(OpBuilder &b, Location loc, Value tensor, int64_t axis);

/// An empty tensor of `sizes` and `elementType`.
Value emptyTensor(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
                  Type elementType);

} // namespace mlir::mxfp4

#endif // MXFP4_LIB_CONVERSION_MXFP4TOLINALG_TENSORUTILS_H

//===- ElementConversion.h - element type conversions -----------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Helpers of the passes that store tensors as bf16 for bf16 GEMM precision.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_LIB_TRANSFORMS_ELEMENTCONVERSION_H
#define MXFP4_LIB_TRANSFORMS_ELEMENTCONVERSION_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

namespace mlir::mxfp4 {

/// `value` (a float tensor) converted element by element to `elementType`
/// by an all-parallel linalg.generic: `arith.truncf` (ties to even) to a
/// narrower type, `arith.extf` to a wider one. A generic rather than a
/// tensor-level arith op, so that mxfp4-fuse-elementwise fuses it with its
/// producer or readers.
Value convertElements(OpBuilder &b, Location loc, Value value,
                      Type elementType);

/// Makes the reader `g` of the f32 operand `use` widen the element where it
/// reads it, once the operand has become bf16: its block argument becomes
/// bf16 and an `arith.extf` at the start of the body takes its place. A
/// reader that then only rounds the element back (a copy of the bf16
/// operand) is erased, its result replaced by the operand.
void widenInReader(linalg::GenericOp g, OpOperand &use);

/// The narrower tensor that `value` widens, if an all-parallel generic with
/// identity maps made `value` from it by `arith.extf` alone; else null.
Value widenedFrom(Value value);

/// A reshape (tensor.collapse_shape or expand_shape) like `reshape`, of
/// `source` (of the same shape as `reshape`'s source, maybe another element
/// type).
Value reshapeLike(OpBuilder &b, Operation *reshape, Value source);

} // namespace mlir::mxfp4

#endif // MXFP4_LIB_TRANSFORMS_ELEMENTCONVERSION_H

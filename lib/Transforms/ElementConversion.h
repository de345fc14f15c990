//===- ElementConversion.h - elementwise type conversions on tensors -*- C++
//-*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_LIB_TRANSFORMS_ELEMENTCONVERSION_H
#define MXFP4_LIB_TRANSFORMS_ELEMENTCONVERSION_H

#include "mlir/IR/Builders.h"

namespace mlir::mxfp4 {

/// `value` (a float tensor) converted element by element to `elementType`
/// by an all-parallel linalg.generic: `arith.truncf` (ties to even) to a
/// narrower type, `arith.extf` to a wider one. A generic rather than a
/// tensor-level arith op, so that mxfp4-fuse-elementwise fuses it with its
/// producer or readers.
Value convertElements(OpBuilder &b, Location loc, Value value,
                      Type elementType);

} // namespace mlir::mxfp4

#endif // MXFP4_LIB_TRANSFORMS_ELEMENTCONVERSION_H

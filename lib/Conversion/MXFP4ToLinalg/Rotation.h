//===- Rotation.h - in-register Walsh-Hadamard rotations --------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The butterfly network of mxfp4.hadamard on one vector, shared by the
// hadamard lowering and the quantize lowering that absorbs a rotation.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_LIB_CONVERSION_MXFP4TOLINALG_ROTATION_H
#define MXFP4_LIB_CONVERSION_MXFP4TOLINALG_ROTATION_H

#include "mlir/IR/Builders.h"

namespace mlir::mxfp4 {

/// The +-1.0 signs of a random rotation of tile size `n` (docs/Semantics.md
/// section 5), repeated over a vector<lanes x f32> (`lanes` a multiple of n).
/// `step` is null for random_fixed.
Value buildRotationSigns(OpBuilder &b, Location loc, int64_t n, int64_t lanes,
                         Value seed, Value step);

/// Rotates every aligned n-element tile of `v` (vector<L x f32>, L a multiple
/// of n) in the butterfly order of docs/Semantics.md section 4. `signs` is
/// null for a deterministic rotation.
Value rotateTiles(OpBuilder &b, Location loc, Value v, int64_t n, Value signs,
                  bool inverse);

} // namespace mlir::mxfp4

#endif // MXFP4_LIB_CONVERSION_MXFP4TOLINALG_ROTATION_H

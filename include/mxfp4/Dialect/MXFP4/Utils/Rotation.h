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

#ifndef MXFP4_DIALECT_MXFP4_UTILS_ROTATION_H
#define MXFP4_DIALECT_MXFP4_UTILS_ROTATION_H

#include "mlir/IR/Builders.h"

#include <optional>

namespace mlir::mxfp4 {

/// The lane order in which the CPU rotates: a vector's even elements, then
/// its odd ones (lane l holds element evenOddLanes(L)[l]). The first
/// butterfly stage then pairs the two halves lane by lane, with no
/// permutation, and a bf16 vector widens to it with a shift and a mask.
SmallVector<int64_t> evenOddLanes(int64_t lanes);

/// The +-1.0 signs of a random rotation of tile size `n` (docs/Semantics.md
/// section 5), repeated over a vector<lanes x f32> (`lanes` a multiple of n)
/// whose lane l holds element `laneElements[l]` (element l if empty).
/// `step` is null for random_fixed.
Value buildRotationSigns(OpBuilder &b, Location loc, int64_t n, int64_t lanes,
                         Value seed, Value step,
                         ArrayRef<int64_t> laneElements = {});

/// Rotates every aligned n-element tile of `v` (vector<L x f32>, L a multiple
/// of n, lane l holding element `laneElements[l]`, element l if empty) in the
/// butterfly order of docs/Semantics.md section 4. `signs` is null for a
/// deterministic rotation. `normalize` false leaves out the final
/// multiplication by 1/sqrt(n), for a caller that folds it into a later one
/// (see normalizationExponent).
Value rotateTiles(OpBuilder &b, Location loc, Value v, int64_t n, Value signs,
                  bool inverse, ArrayRef<int64_t> laneElements = {},
                  bool normalize = true);

/// The exponent e with 1/sqrt(n) = 2^e, if that is exact (n = 4, 16, 64, ...).
std::optional<int64_t> normalizationExponent(int64_t n);

} // namespace mlir::mxfp4

#endif // MXFP4_DIALECT_MXFP4_UTILS_ROTATION_H

//===- FlashAttention.h - fused causal attention on Hopper ------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The launches that replace the causal_attention composites
// (mxfp4/Dialect/MXFP4/Transforms/Composites.h) on sm_90a: FlashAttention-2
// style kernels that never store the [rows x keys] scores.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_LIB_CONVERSION_ATTENTIONTONVGPU_FLASHATTENTION_H
#define MXFP4_LIB_CONVERSION_ATTENTIONTONVGPU_FLASHATTENTION_H

#include "mlir/IR/Builders.h"

namespace mlir::mxfp4::sm90 {

/// Shapes of one attention: q [heads, groups * seq, headDim] (stacked GQA
/// query heads), k and v [heads, seq, headDim], all f32 buffers with the
/// identity layout.
struct AttentionShape {
  int64_t heads, groups, seq, headDim;
};

/// True if the kernels cover `shape`: seq a multiple of 64, groups * seq
/// of 128, headDim a multiple of 16 up to 128 (larger heads would need
/// fewer rows a warp to keep the accumulators in registers).
bool isSupported(const AttentionShape &shape);

/// Launches computing o [heads, groups * seq, headDim] and lse [heads,
/// groups * seq] from q, k, v (buffers allocated by the caller).
void emitAttentionForward(OpBuilder &b, Location loc,
                          const AttentionShape &shape, Value q, Value k,
                          Value v, Value o, Value lse);

/// Launches computing dq, dk, dv from q, k, v, o, lse and dO.
void emitAttentionBackward(OpBuilder &b, Location loc,
                           const AttentionShape &shape, Value q, Value k,
                           Value v, Value o, Value lse, Value dO, Value dq,
                           Value dk, Value dv);

} // namespace mlir::mxfp4::sm90

#endif // MXFP4_LIB_CONVERSION_ATTENTIONTONVGPU_FLASHATTENTION_H

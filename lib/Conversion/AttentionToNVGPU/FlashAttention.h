//===- FlashAttention.h - fused causal attention on Hopper ------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The launches that replace the causal_attention composites
// (mxfp4/Dialect/MXFP4/Transforms/Composites.h) on sm_90a: fused kernels
// that never store the [rows x keys] scores, on warpgroup MMAs over TMA
// tiles for bf16 operands at head dims 64 and 128 (WarpgroupAttention.cpp),
// FlashAttention-2 style on `mma.sync` otherwise (FlashAttention.cpp).
// Operand layouts are AttentionShape's (AttentionCommon).
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_LIB_CONVERSION_ATTENTIONTONVGPU_FLASHATTENTION_H
#define MXFP4_LIB_CONVERSION_ATTENTIONTONVGPU_FLASHATTENTION_H

#include "mxfp4/Conversion/AttentionCommon/Attention.h"

namespace mlir::mxfp4::sm90 {

/// True if the kernels cover `shape`: seq a multiple of 64, groups * seq
/// of 128 and at most 16 x 65535 (a head's blocks run along the grid's y),
/// at most 65535 (batch, KV head) pairs,
/// headDim a multiple of 16 up to 128 (larger heads would need fewer rows a
/// warp to keep the accumulators in registers).
bool isSupported(const AttentionShape &shape);

/// Launches computing o and lse from q, k, v (buffers allocated by the
/// caller).
SmallVector<AttentionLaunch> emitAttentionForward(OpBuilder &b, Location loc,
                                                  const AttentionShape &shape,
                                                  Value q, Value k, Value v,
                                                  Value o, Value lse);

/// Launches computing dq, dk, dv from q, k, v, o, lse and dO.
SmallVector<AttentionLaunch>
emitAttentionBackward(OpBuilder &b, Location loc, const AttentionShape &shape,
                      Value q, Value k, Value v, Value o, Value lse, Value dO,
                      Value dq, Value dk, Value dv);

} // namespace mlir::mxfp4::sm90

#endif // MXFP4_LIB_CONVERSION_ATTENTIONTONVGPU_FLASHATTENTION_H

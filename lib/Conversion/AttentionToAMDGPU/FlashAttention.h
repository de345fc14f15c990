//===- FlashAttention.h - fused causal attention on gfx950 ------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The launches that replace the causal_attention composites
// (mxfp4/Dialect/MXFP4/Transforms/Composites.h) on gfx950: FlashAttention-2
// style kernels on bf16 MFMAs (Mfma.h) that never store the [rows x keys]
// scores. Operand layouts are AttentionShape's (AttentionCommon).
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_LIB_CONVERSION_ATTENTIONTOAMDGPU_FLASHATTENTION_H
#define MXFP4_LIB_CONVERSION_ATTENTIONTOAMDGPU_FLASHATTENTION_H

#include "mxfp4/Conversion/AttentionCommon/Attention.h"
#include "mxfp4/Dialect/MXFP4/IR/MXFP4Dialect.h"

namespace mlir::mxfp4::gfx950 {

/// Attention blocks resident on an MI355X, for ordering them
/// (mxfp4::sectionHeads): 256 CUs, two blocks a CU (the kernels' 256-375
/// VGPRs allow a wave or two a SIMD; the ISA report's figures at head dim
/// 128). An estimate: the order is not measured on an MI355X.
constexpr int64_t kResidentBlocks = 2 * 256;

/// True if the kernels cover `shape`: seq a multiple of 64, groups * seq at
/// most 16 x 65535 (a head's blocks run along the grid's y), head dim 64 or
/// 128.
bool isSupported(const AttentionShape &shape);

/// Records on `launch`'s kernel the mean key or query tiles its blocks walk
/// (causal blocks walk up to their diagonal, so the loop bounds depend on
/// the block and the step model cannot read the count from them).
inline void setSteadyIterations(OpBuilder &b, AttentionLaunch &launch,
                                double mean) {
  launch.kernelAttributes.set(kSteadyIterationsAttrName,
                              b.getF64FloatAttr(mean));
}

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

} // namespace mlir::mxfp4::gfx950

#endif // MXFP4_LIB_CONVERSION_ATTENTIONTOAMDGPU_FLASHATTENTION_H

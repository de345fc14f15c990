//===- Fp4Expansion.h - FP4 codes to bf16 pairs, exactly -------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// sm_90 has no FP4 tensor cores: the MXFP4 GEMM (GemmKernel.cpp) and the
// expansion of its B (ExpandBKernel.cpp) turn FP4 codes and E8M0 scales
// into bf16 for wgmma. The expansion is exact: an FP4 value times its
// power-of-two scale has at most two significant bits and lies in bf16's
// range exactly when it lies in f32's (byte 0 gives the bf16 subnormal
// 2^-127; 6 * 2^127 overflows in both). It is arithmetic, not a table
// lookup, which would add to the shared-memory traffic. Code bits s e1 e0 m
// moved to bf16 bits 15 and 8..6 are the FP4 value times 2^-126 (e1 e0 = 0
// gives bf16's subnormals 0 and 2^-127); `mul.bf16x2` by 2^126, then by
// the scale, gives the value (byte 255 makes the block NaN). A pair holds
// codes q and q + 4 of a word, 16 bits apart, so one multiply moves both;
// the integer pipe, at half the issue rate like the FMA pipe's multiplies,
// takes only the masks and a rotate.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_LIB_CONVERSION_MXFP4TONVGPU_FP4EXPANSION_H
#define MXFP4_LIB_CONVERSION_MXFP4TONVGPU_FP4EXPANSION_H

#include "mxfp4/Conversion/MXFP4ToGPUCommon/KernelBuilder.h"

namespace mlir::mxfp4::sm90 {

using kernels::KernelBuilder;

/// The byte buffer `bytes` (1-D) viewed as i32 words: codes are read 16
/// bytes at a time, word scales 4.
Value codeWords(KernelBuilder &kb, Value bytes);

/// 2^(s-127) as a pair of bf16 for the scale byte `s` (i32): byte 0 is the
/// subnormal 2^-127, 255 NaN.
Value scalePair(OpBuilder &b, Location loc, Value s);

/// The four bf16 pairs (as i32) of the eight codes of `word` (i32) with
/// scale `scale` (from scalePair): pair q holds codes q and q + 4.
SmallVector<Value, 4> expandPairs(OpBuilder &b, Location loc, Value word,
                                  Value scale);

/// Stores `pair` (a bf16 pair as i32, from expandPairs) at element
/// `element` (even) of the bf16 buffer `buffer`.
void storePair(OpBuilder &b, Location loc, Value pair, Value buffer,
               Value element);

} // namespace mlir::mxfp4::sm90

#endif // MXFP4_LIB_CONVERSION_MXFP4TONVGPU_FP4EXPANSION_H

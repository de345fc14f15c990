//===- Composites.h - functions a target may replace by one kernel -*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A composite is a private function whose body is the reference
// decomposition of one operation (like StableHLO's composite op): every
// pipeline may inline it, and a target with a fused kernel for it replaces
// the calls instead. The kernel must compute what the body computes, within
// the target's documented tolerance.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_DIALECT_MXFP4_TRANSFORMS_COMPOSITES_H
#define MXFP4_DIALECT_MXFP4_TRANSFORMS_COMPOSITES_H

// A composite function names its operation in kCompositeAttrName.
#include "mxfp4/Dialect/MXFP4/IR/MXFP4Dialect.h"

#include "llvm/ADT/StringRef.h"

namespace mlir::mxfp4 {

/// Causal attention with grouped KV heads, f32, token-major (the
/// projections' rows as they are, so that a fused kernel reads the heads in
/// place):
///   (q [B, S, H, D], k [B, S, KVH, D], v [B, S, KVH, D]) ->
///   (o [B, S, H, D], lse [B, H, S])
/// Query head h uses KV head h / (H / KVH); position s sees keys 0..s;
/// scores are q k^T / sqrt(D), o = softmax(scores) v, lse = max + log(sum
/// exp).
constexpr llvm::StringLiteral kCausalAttention = "causal_attention";
/// Its gradient: (q, k, v, o, lse, dO) -> (dq, dk, dv), with
/// P = exp(scores - lse) and dS = P * (dO v^T - rowsum(dO * o)) / sqrt(D).
constexpr llvm::StringLiteral kCausalAttentionBackward =
    "causal_attention_backward";

} // namespace mlir::mxfp4

#endif // MXFP4_DIALECT_MXFP4_TRANSFORMS_COMPOSITES_H

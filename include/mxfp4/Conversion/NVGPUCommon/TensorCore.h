//===- TensorCore.h - warp-level bf16 MMAs on Hopper ------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Warp-level bf16 MMAs for fused attention: operand tiles in shared
// memory, `ldmatrix` fragments (transposed for operands whose rows are
// contiguous), `mma.sync.m16n8k16` into f32 accumulators, and products fed
// back as A fragments from registers. Also what the GEMMs on warpgroup MMAs
// (WarpgroupMma.h) share: the block size, shared-memory addresses, and how
// a GEMM with too few tiles for the device splits K.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_CONVERSION_NVGPUCOMMON_TENSORCORE_H
#define MXFP4_CONVERSION_NVGPUCOMMON_TENSORCORE_H

#include "mxfp4/Conversion/MXFP4ToGPUCommon/KernelBuilder.h"

namespace mlir::mxfp4::sm90 {

using kernels::KernelBuilder;

constexpr int64_t kBlockThreads = 256;
/// The bf16 GEMMs' block tiles are kTile x kTile; the MXFP4 GEMM's are
/// (64 x gemmWarpgroups) x kTile (Kernels.h).
constexpr int64_t kTile = 128;

/// SMs of an H200: a grid smaller than this leaves the device idle.
constexpr int64_t kMultiprocessors = 132;

/// How a GEMM's K steps are divided among blocks: split s (grid z) sums
/// steps [s * stepsPerSplit, min((s + 1) * stepsPerSplit, steps)).
struct KSplit {
  int64_t splits, stepsPerSplit;
};

/// Splits K when `tiles` blocks cannot fill the device (weight gradients: a
/// small output, K = tokens), into ranges of at least 8 of the `steps` K
/// steps. Each split writes an f32 partial tile to a workspace and a second
/// launch adds the splits in split order: deterministic, but rounded
/// differently from one sum over K, so a GEMM with enough tiles (or a short
/// K) stays unsplit.
KSplit splitK(int64_t tiles, int64_t steps, int64_t resident);

/// An operand tile in shared memory, bf16: [rows][depth] if K (the depth)
/// is contiguous, else [depth][rows], lines padded by 8 elements so that
/// `ldmatrix` is free of bank conflicts (flash attention's operands).
struct SharedTile {
  Value memref; // 1-D bf16 in workgroup memory
  bool kContiguous;
  int64_t rows, depth;

  int64_t stride() const { return (kContiguous ? depth : rows) + 8; }
  static int64_t elements(bool kContiguous, int64_t rows, int64_t depth) {
    return (kContiguous ? rows : depth) * ((kContiguous ? depth : rows) + 8);
  }
  /// The element offset of (row, k).
  Value offset(KernelBuilder &kb, Value row, Value k) const;
};

/// The byte address (index) in shared memory of bf16 element `element` of
/// the workgroup buffer `memref`.
Value sharedAddress(KernelBuilder &kb, Value memref, Value element);

/// `address` (from `sharedAddress`) as an LLVM shared-memory pointer, the
/// operand of `ldmatrix`/`stmatrix`.
Value sharedPointer(KernelBuilder &kb, Value address);

/// The four registers of an `ldmatrix.x4` of the 16 x 16 sub-tile of `t` at
/// (row, k): A's fragment of rows row..row+15 if `aOrder`, else B's
/// fragments of the two n8 tiles at row and row + 8 (two registers each).
SmallVector<Value> loadFragment(KernelBuilder &kb, const SharedTile &t,
                                Value row, Value k, bool aOrder);

/// acc + A * B over one k16: `a` four registers of A's fragment, `b` two of
/// B's, `acc` vector<4xf32> in C's fragment layout.
Value mma(KernelBuilder &kb, ArrayRef<Value> a, ArrayRef<Value> b, Value acc);

/// The A fragment (four i32 of bf16 pairs) of the 16 x 16 product rows of a
/// k16 slice whose two n8 halves are the accumulators `lo` and `hi`
/// (vector<4xf32>, C's layout): C's fragment of an m16n8 tile is A's of the
/// matching k8 half, so a product feeds the next MMA from registers.
SmallVector<Value> accumulatorsAsA(KernelBuilder &kb, Value lo, Value hi);

} // namespace mlir::mxfp4::sm90

#endif // MXFP4_CONVERSION_NVGPUCOMMON_TENSORCORE_H

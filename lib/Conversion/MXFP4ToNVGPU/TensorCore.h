//===- TensorCore.h - warp-level bf16 MMAs on Hopper ------------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The mma.sync tensor-core core of the sm_90a MXFP4 GEMM (fused attention
// uses its fragments; linalg contractions use WarpgroupMma.h): a 256-thread
// block computes a
// 128 x 128 tile of C from bf16 operand tiles in shared memory, K steps of
// 64, 8 warps in a 2 x 4 grid of 64 x 32 warp tiles, `ldmatrix` (transposed
// for operands whose rows are contiguous) and `mma.sync.m16n8k16` into f32
// accumulators; and how a GEMM with too few tiles for the device splits K.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_LIB_CONVERSION_MXFP4TONVGPU_TENSORCORE_H
#define MXFP4_LIB_CONVERSION_MXFP4TONVGPU_TENSORCORE_H

#include "../MXFP4ToGPUCommon/KernelBuilder.h"

namespace mlir::mxfp4::sm90 {

using kernels::KernelBuilder;

constexpr int64_t kBlockThreads = 256;
constexpr int64_t kTile = 128, kStepK = 64;
constexpr int64_t kWarpsM = 2, kWarpsN = 4;
constexpr int64_t kWarpM = kTile / kWarpsM, kWarpN = kTile / kWarpsN;
/// Accumulators a warp holds: (kWarpM / 16) x (kWarpN / 8) vector<4xf32>.
constexpr int64_t kAccumulators = (kWarpM / 16) * (kWarpN / 8);

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
KSplit splitK(int64_t tiles, int64_t steps);

/// An operand tile in shared memory, bf16: [rows][depth] if K (the depth)
/// is contiguous, else [depth][rows], lines padded by 8 elements so that
/// `ldmatrix` is free of bank conflicts. The GEMMs' tiles are 128 rows by
/// one K step of 64.
struct SharedTile {
  Value memref; // 1-D bf16 in workgroup memory
  bool kContiguous;
  int64_t rows = kTile, depth = kStepK;

  int64_t stride() const { return (kContiguous ? depth : rows) + 8; }
  static int64_t elements(bool kContiguous, int64_t rows = kTile,
                          int64_t depth = kStepK) {
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

/// One K step of this warp: acc[mi * 4 + ni] += A(mi) * B(ni)^T over the
/// step's 64 K. `warpM`, `warpN`: this warp's place in the 2 x 4 grid.
void mmaStep(KernelBuilder &kb, const SharedTile &a, const SharedTile &b,
             Value warpM, Value warpN, SmallVectorImpl<Value> &acc);

/// Calls `body(row, col, pair)` for each pair of adjacent accumulators
/// (columns col, col + 1 of row `row` of C, vector<2xf32>) of this warp,
/// whose tile starts at (rowBase, colBase).
void forEachAccumulatorPair(
    KernelBuilder &kb, ArrayRef<Value> acc, Value rowBase, Value colBase,
    function_ref<void(Value row, Value col, Value pair)> body);

} // namespace mlir::mxfp4::sm90

#endif // MXFP4_LIB_CONVERSION_MXFP4TONVGPU_TENSORCORE_H

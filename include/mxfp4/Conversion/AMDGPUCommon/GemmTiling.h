//===- GemmTiling.h - shared pieces of the gfx950 GEMM kernels --*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What the MXFP4 GEMM (MXFP4ToAMDGPU) and the bf16 GEMM (LinalgToAMDGPU)
// share on gfx950: the workgroup order that keeps consecutive tiles on one
// XCD's L2, and the swizzled LDS tile both stage their K steps in. An LDS
// row holds 128 bytes of one operand row (256 FP4 or 64 bf16 values along
// K) as 8 chunks of 16 bytes; chunk c of row r sits in slot c ^ (r % 8), so
// the 16 lanes that read one K chunk of 16 consecutive rows hit distinct
// banks. Rows are copied global -> LDS directly (`amdgpu.gather_to_lds`,
// 16 bytes a lane): the LDS side of such a copy is in lane order, so each
// lane fetches the chunk that belongs in its slot. Where the tiles cannot
// fill the CUs, both split K the same way (`splitK`).
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_CONVERSION_AMDGPUCOMMON_GEMMTILING_H
#define MXFP4_CONVERSION_AMDGPUCOMMON_GEMMTILING_H

#include "mxfp4/Conversion/MXFP4ToGPUCommon/KernelBuilder.h"

#include "mlir/IR/Builders.h"

#include <limits>
#include <utility>

namespace mlir::mxfp4::gfx950 {

/// CUs of an MI355X: a grid smaller than this leaves the device idle.
constexpr int64_t kComputeUnits = 256;
/// MI355X deals workgroups round-robin to this many XCDs.
constexpr int64_t kXcds = 8;
/// Tile rows walked together (their A tiles stay in L2).
constexpr int64_t kGroupM = 8;
/// Bytes of one swizzled LDS row: 8 chunks of 16 bytes.
constexpr int64_t kLdsRowBytes = 128;
constexpr int64_t kLdsChunkBytes = 16;

/// Maps launch order `pid` to (tile row, tile column) of a tilesM x tilesN
/// grid: first undoes the round-robin distribution over XCDs so that
/// consecutive tiles share an L2, then walks groups of kGroupM tile rows
/// column by column. A bijection for every grid size.
std::pair<Value, Value> remapTileForXcds(kernels::KernelBuilder &kb, Value pid,
                                         int64_t tilesM, int64_t tilesN);

/// The LDS slot of chunk `chunk` (0..7) of row `row`: chunk ^ (row % 8).
Value swizzledSlot(kernels::KernelBuilder &kb, Value chunk, Value row);

/// Copies `tileRows` (a multiple of 32) rows of 8 chunks into `lds` with
/// the swizzle, 4 waves of 64 lanes (`wave`, `lane`), each wave instruction
/// filling 8 rows: lane l writes slot l % 8 of row l / 8 of its group and
/// fetches chunk (l % 8) ^ (l / 8). `source(groupRow, laneRow, chunk)`
/// gives the element offset in `src` of chunk `chunk` of tile row
/// groupRow + laneRow (groupRow: the group's first row), masked by the
/// caller where out of range; `dstBase` is the tile's first element in
/// `lds`; `transfer` is the 16-byte vector type each lane moves.
void copySwizzledRowsToLds(
    kernels::KernelBuilder &kb, Value src, Value lds, Value dstBase,
    int64_t tileRows, VectorType transfer, Value wave, Value lane,
    llvm::function_ref<Value(Value groupRow, Value laneRow, Value chunk)>
        source);

/// How a GEMM's K steps are divided among grid z: split s sums steps
/// [s * stepsPerSplit, min((s + 1) * stepsPerSplit, steps)).
struct KSplit {
  int64_t splits, stepsPerSplit;
};

/// Splits K when `workgroups` tiles leave CUs idle (weight gradients: a
/// small output, K = tokens): enough splits for kComputeUnits workgroups,
/// at least `minStepsPerSplit` of the `steps` K steps a split and at most
/// `maxSplits` splits (the caller's bound on the workspace traffic); no
/// split below 2 x minStepsPerSplit steps. Each split writes an f32
/// partial tile to a workspace and a second launch adds the splits in
/// split order: deterministic, but rounded differently from one sum over
/// K, so a GEMM whose tiles fill the device (or with a short K) stays
/// unsplit.
KSplit splitK(int64_t workgroups, int64_t steps, int64_t minStepsPerSplit,
              int64_t maxSplits = std::numeric_limits<int64_t>::max());

} // namespace mlir::mxfp4::gfx950

#endif // MXFP4_CONVERSION_AMDGPUCOMMON_GEMMTILING_H

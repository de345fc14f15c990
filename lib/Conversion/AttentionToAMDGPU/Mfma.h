//===- Mfma.h - bf16 MFMA and LDS building blocks of attention --*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What the gfx950 attention kernels share: `v_mfma_f32_16x16x32_bf16`
// (amdgpu.mfma 16x16x32, D[m][n] += sum_k A[m][k] B[n][k]) and the LDS
// tiles that feed it. Lane layouts (LaneLayout.h, Bf16 functions): lane l
// of an A or B operand holds row l % 16, k = 8 (l / 16) + e (e = 0..7); lane
// l of the accumulator holds column l % 16, rows 4 (l / 16) + i (i = 0..3).
//
// A product's accumulator feeds the next MFMA as its B operand without
// leaving the lane: computing D^T = B A^T puts the product's rows (n) in
// lane columns, and two accumulator tiles t, t + 1 give a lane 8 values of
// its column at rows 16 t + 4 (l / 16) + i and 16 (t + 1) + 4 (l / 16) + i.
// The sum over k does not care about k's order, so the other operand is
// read with the same permutation ("accumulator order": operand element e of
// lane l is k = 4 (l / 16) + e for e < 4 and 16 + 4 (l / 16) + e - 4 for
// e >= 4, within the MFMA's 32 k).
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_LIB_CONVERSION_ATTENTIONTOAMDGPU_MFMA_H
#define MXFP4_LIB_CONVERSION_ATTENTIONTOAMDGPU_MFMA_H

#include "mxfp4/Conversion/MXFP4ToGPUCommon/KernelBuilder.h"

#include "mlir/IR/Builders.h"

namespace mlir::mxfp4::gfx950 {

/// Lanes of a wave.
constexpr int64_t kWaveLanes = 64;
/// The MFMA's m = n, and its k.
constexpr int64_t kMfmaTile = 16;
constexpr int64_t kMfmaK = 32;
/// bf16 values a lane feeds into one MFMA operand.
constexpr int64_t kOperandElements = 8;
/// Padding of an LDS tile row (bf16 values): 16 bytes, so that the 16 rows
/// one operand read touches start in different banks.
constexpr int64_t kLdsRowPadding = 8;

/// A lane's place in a 16x16x32 MFMA: its row of an operand (column of
/// the accumulator), l % 16, and its group, l / 16.
struct MfmaLane {
  Value lane, row, group;
};
MfmaLane getMfmaLane(kernels::KernelBuilder &kb, Value lane);

/// A row-major bf16 tile of `rows` x `cols` in workgroup memory `memory`
/// (1-D), from element `base` (an index) on, rows padded to `stride()`
/// elements.
struct LdsTile {
  Value memory, base;
  int64_t rows, cols;
  int64_t stride() const { return cols + kLdsRowPadding; }
  /// The workgroup elements a tile of this shape takes.
  static int64_t elements(int64_t rows, int64_t cols) {
    return rows * (cols + kLdsRowPadding);
  }
  Value offset(kernels::KernelBuilder &kb, Value row, Value col) const;
};

/// The element indices in a global buffer of column `col` of a tile's row
/// `row`.
using RowIndices = function_ref<SmallVector<Value>(Value row, Value col)>;

/// Copies `tile.rows` x `tile.cols` values (`cols` a multiple of 8) from
/// `src` (f32, rounded to bf16 on the way, or bf16) into `tile`, `threads`
/// threads (`tid`) each moving chunks of 8 consecutive values of a row,
/// consecutive threads consecutive chunks (coalesced reads).
void copyRowsToLds(kernels::KernelBuilder &kb, Value src, RowIndices at,
                   const LdsTile &tile, Value tid, int64_t threads);

/// The same copy transposed: source rows r (an even count) are tile
/// columns, so `tile` is `cols` x `rows` of the source. Each thread reads
/// chunks of 8 values of two consecutive rows and stores the 8 pairs as 32-
/// bit words.
void copyRowsToLdsTransposed(kernels::KernelBuilder &kb, Value src,
                             RowIndices at, const LdsTile &tile,
                             int64_t srcRows, int64_t srcCols, Value tid,
                             int64_t threads);

/// The operand fragment of rows `row0` + l % 16 of `tile`, k from `k0`:
/// values k0 + 8 (l / 16) .. + 7, one 16-byte read.
Value loadOperand(kernels::KernelBuilder &kb, const LdsTile &tile,
                  const MfmaLane &lane, Value row0, Value k0);

/// The same rows' fragment in accumulator order: k0 + 4 (l / 16) .. + 3
/// and k0 + 16 + 4 (l / 16) .. + 3, two 8-byte reads.
Value loadOperandInAccumulatorOrder(kernels::KernelBuilder &kb,
                                    const LdsTile &tile, const MfmaLane &lane,
                                    Value row0, Value k0);

/// `count` values of `src` from `indices` on (contiguous), as bf16
/// (f32 is rounded, ties to even).
Value loadAsBf16(kernels::KernelBuilder &kb, Value src, ValueRange indices,
                 int64_t count);

/// Accumulator tiles `first` and `second` (vector<4xf32> each, 16 rows
/// apart) as one B operand in accumulator order, rounded to bf16.
Value accumulatorsAsOperand(kernels::KernelBuilder &kb, Value first,
                            Value second);

/// acc + A B^T on `v_mfma_f32_16x16x32_bf16`: `a` and `b` vector<8xbf16>,
/// `acc` vector<4xf32>.
Value mfma(kernels::KernelBuilder &kb, Value a, Value b, Value acc);

/// A vector<4xf32> of zeros.
Value zeroAccumulator(kernels::KernelBuilder &kb);

/// Combines `x` (f32) over the four lanes that hold one accumulator
/// column (l, l ^ 16, l ^ 32, l ^ 48): maximum or sum.
Value reduceOverColumn(kernels::KernelBuilder &kb, Value x, bool isMax);

} // namespace mlir::mxfp4::gfx950

#endif // MXFP4_LIB_CONVERSION_ATTENTIONTOAMDGPU_MFMA_H

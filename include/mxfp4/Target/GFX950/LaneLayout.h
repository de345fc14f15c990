//===- LaneLayout.h - gfx950 FP4 scaled MFMA lane layouts -------*- C++ -*-===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The register layouts of the two FP4 x FP4 scaled MFMAs of gfx950
// (`v_mfma_scale_f32_16x16x128_f8f6f4` and `v_mfma_scale_f32_32x32x64_f8f6f4`,
// docs: shared/research/amdgpu.md §2) and the pre-shuffled E8M0 scale layouts
// that let one dword load per lane feed four MFMAs (§2.5).
//
// This is the single source of truth shared by the GEMM kernel generator
// (which turns these formulas into index arithmetic in the kernel IR) and the
// emulator (whose MFMA semantics gather the 64 lanes' registers with them).
//
// Conventions: A is M x K, B is stored N x K ("TN", K contiguous), both as FP4
// bytes with the even K element in the low nibble; C/D is M x N. A "K block"
// is 32 consecutive K values, the unit an E8M0 scale applies to. Every
// function that takes a lane, register, row or K block expects it in range
// (see the `isValid*` helpers); host-facing entry points that take sizes from
// users validate them and return an llvm::Error.
//
//===----------------------------------------------------------------------===//

#ifndef MXFP4_TARGET_GFX950_LANELAYOUT_H
#define MXFP4_TARGET_GFX950_LANELAYOUT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace mlir::mxfp4::gfx950 {

/// Lanes of a gfx950 wave (wave64).
inline constexpr int64_t kWaveSize = 64;
/// K values covered by one E8M0 scale (the MX block size).
inline constexpr int64_t kScaleBlockSize = 32;
/// Bytes of FP4 A (or B) data one lane feeds into one MFMA: 32 values.
inline constexpr int64_t kFragmentBytes = 16;
/// Rows and K blocks of one 256-byte chunk of a pre-shuffled scale buffer.
inline constexpr int64_t kShuffleChunkRows = 32;
inline constexpr int64_t kShuffleChunkKBlocks = 8;

/// The FP4 x FP4 scaled MFMA shapes of gfx950.
enum class MfmaShape { m16n16k128, m32n32k64 };

/// Static facts about one MFMA shape.
struct MfmaGeometry {
  /// Tile sizes: D (m x n) += A (m x k) * B^T (n x k).
  int64_t m, n, k;
  /// f32 accumulator registers per lane (m * n / 64).
  int64_t accRegisters;
  /// Matrix-core cycles for FP4 x FP4 operands.
  int64_t cycles;
  /// K blocks of 32 per instruction (k / 32), i.e. lane groups of m lanes.
  int64_t kBlocks;
};

/// Returns the geometry of `shape`: 16,16,128,4,16,4 or 32,32,64,16,32,2.
MfmaGeometry getGeometry(MfmaShape shape);

/// Returns the shape with tile `m` x `n` x `k`, or nullopt if gfx950 has no
/// FP4 scaled MFMA of that size.
std::optional<MfmaShape> getMfmaShape(int64_t m, int64_t n, int64_t k);

/// Returns "16x16x128" or "32x32x64", as `amdgpu.scaled_mfma` spells it.
llvm::StringRef getMfmaShapeName(MfmaShape shape);

/// Whether `lane` is a lane of a wave, 0..63.
bool isValidLane(int64_t lane);

//===----------------------------------------------------------------------===//
// A and B operands
//===----------------------------------------------------------------------===//

/// What one lane feeds into an MFMA as A (or B): 32 FP4 values, the K range
/// 32*kBlock .. 32*kBlock+31 of tile row `row` of A (tile column `row` of C
/// for B, which is stored N x K). In memory that is 16 contiguous bytes.
struct OperandSlot {
  int64_t row, kBlock;
};

/// Returns the operand slot of `lane` (0..63): row = lane % m,
/// kBlock = lane / m (amdgpu.md §2.1, §2.2). Generators emit exactly this as
/// `arith.remui`/`arith.divui` of the lane id by `getGeometry(shape).m`.
OperandSlot getOperandSlot(MfmaShape shape, int64_t lane);

/// Returns the lane that supplies tile row `row` (0..m-1), K block `kBlock`
/// (0..kBlocks-1); the inverse of getOperandSlot.
int64_t getOperandLane(MfmaShape shape, int64_t row, int64_t kBlock);

/// Returns the offset of the first of `lane`'s 16 fragment bytes from the
/// byte holding element (0, 0) of the MFMA's tile, for a K-contiguous FP4
/// matrix with `rowStrideBytes` bytes per row (K / 2 for a dense matrix).
int64_t getOperandByteOffset(MfmaShape shape, int64_t lane,
                             int64_t rowStrideBytes);

//===----------------------------------------------------------------------===//
// C / D accumulators
//===----------------------------------------------------------------------===//

/// An element of the m x n accumulator tile.
struct AccumulatorSlot {
  int64_t row, col;
};

/// Returns the element of C/D held by register `reg` (0..accRegisters-1) of
/// `lane`: col = lane % n and
///   16x16x128: row = 4 * (lane / 16) + reg,
///   32x32x64:  row = 8 * (reg / 4) + 4 * (lane / 32) + reg % 4.
AccumulatorSlot getAccumulatorSlot(MfmaShape shape, int64_t lane, int64_t reg);

/// Where an accumulator element lives.
struct AccumulatorLocation {
  int64_t lane, reg;
};

/// Returns the lane and register holding C/D element (`row`, `col`); the
/// inverse of getAccumulatorSlot.
AccumulatorLocation getAccumulatorLocation(MfmaShape shape, int64_t row,
                                           int64_t col);

/// The accumulator row split into a lane part and a register part, so that a
/// generator computes the lane part once in IR and adds compile-time register
/// offsets: row = getAccumulatorLaneRow(lane) + getAccumulatorRegRow(reg).
/// The lane part is 4 * (lane / n); registers 4q..4q+3 are four consecutive
/// rows of the same column.
int64_t getAccumulatorLaneRow(MfmaShape shape, int64_t lane);
int64_t getAccumulatorRegRow(MfmaShape shape, int64_t reg);

//===----------------------------------------------------------------------===//
// E8M0 scales
//===----------------------------------------------------------------------===//

/// Natural layout: a row-major [rows, kBlocks] byte matrix. Returns the byte
/// offset of scale (`row`, `kBlock`).
int64_t getNaturalScaleOffset(int64_t kBlocks, int64_t row, int64_t kBlock);

/// The pre-shuffled layouts (Triton `shuffle_scales_cdna4`, amdgpu.md §2.5)
/// pad rows to a multiple of 32 and K blocks to a multiple of 8 and cut the
/// matrix into 256-byte chunks of 32 rows x 8 K blocks, chunk
/// (row / 32, kBlock / 8) at byte 256 * ((row / 32) * paddedKBlocks / 8 +
/// kBlock / 8). Inside a chunk lane l's dword is bytes 4l..4l+3 and holds the
/// four scales l needs for four MFMAs:
///   32x32x64  (nonkdim 32): byte q of lane 32*kh + r = scale[r][2q + kh],
///             i.e. one row tile x four consecutive K steps;
///   16x16x128 (nonkdim 16): byte 2*kj + mm of lane 16*kg + r =
///             scale[16*mm + r][4*kj + kg],
///             i.e. two row tiles x two consecutive K steps.
int64_t getPaddedScaleRows(int64_t rows);
int64_t getPaddedScaleKBlocks(int64_t kBlocks);
/// Returns the size of the shuffled buffer of a [rows, kBlocks] matrix.
int64_t getShuffledScaleBytes(int64_t rows, int64_t kBlocks);

/// Returns the byte offset in the shuffled buffer of scale (`row`, `kBlock`)
/// of a [rows, kBlocks] scale matrix (`row` and `kBlock` may address padding).
int64_t getShuffledScaleOffset(MfmaShape shape, int64_t rows, int64_t kBlocks,
                               int64_t row, int64_t kBlock);

/// A scale coordinate; for padding bytes row >= rows or kBlock >= kBlocks.
struct ScaleCoord {
  int64_t row, kBlock;
};

/// Returns the scale coordinate stored at byte `offset` (0 .. shuffled size)
/// of the shuffled buffer; the inverse of getShuffledScaleOffset.
ScaleCoord getShuffledScaleCoord(MfmaShape shape, int64_t rows, int64_t kBlocks,
                                 int64_t offset);

/// The MFMAs one scale dword feeds: `rowTiles` consecutive row tiles of m
/// rows times `kSteps` consecutive K steps of k (1 x 4 for 32x32x64, 2 x 2
/// for 16x16x128). Tiles and steps are aligned to these counts.
struct ScaleDwordTile {
  int64_t rowTiles, kSteps;
};
ScaleDwordTile getScaleDwordTile(MfmaShape shape);

/// Where a lane finds its scale for one MFMA in a shuffled buffer: the byte
/// offset of its dword (a multiple of 4) and the byte inside it, which is the
/// `scalesIdx` of `amdgpu.scaled_mfma` when the dword is loaded as
/// vector<4xf8E8M0FNU>.
struct ShuffledScaleSource {
  int64_t dwordOffset, scalesIdx;
};

/// Returns the scale source of `lane` for the MFMA on rows
/// [rowTile * m, +m) and K [kStep * k, +k) of a matrix with `kBlocks` K
/// blocks. Every lane of such an MFMA reads the same byte index, and the
/// MFMAs of one ScaleDwordTile read the same dwords.
ShuffledScaleSource getShuffledScaleSource(MfmaShape shape, int64_t kBlocks,
                                           int64_t rowTile, int64_t kStep,
                                           int64_t lane);

/// Checks that a [rows, kBlocks] scale matrix has a usable shape.
llvm::Error checkScaleMatrixShape(int64_t rows, int64_t kBlocks);

/// Returns the shuffled buffer of the natural [rows, kBlocks] matrix
/// `natural`; padding bytes get `padding` (127 = 2^0: never rely on 0, see
/// amdgpu.md §1.2).
llvm::Expected<std::vector<uint8_t>>
shuffleScales(MfmaShape shape, int64_t rows, int64_t kBlocks,
              llvm::ArrayRef<uint8_t> natural, uint8_t padding = 127);

/// Returns the natural [rows, kBlocks] matrix of the shuffled buffer
/// `shuffled`; the inverse of shuffleScales.
llvm::Expected<std::vector<uint8_t>>
unshuffleScales(MfmaShape shape, int64_t rows, int64_t kBlocks,
                llvm::ArrayRef<uint8_t> shuffled);

//===----------------------------------------------------------------------===//
// bf16 MFMAs
//===----------------------------------------------------------------------===//

/// The bf16 x bf16 -> f32 MFMAs of gfx950 that take vector<8xbf16> operands
/// (`v_mfma_f32_16x16x32_bf16`, `v_mfma_f32_32x32x16_bf16`; amdgpu.mfma
/// 16x16x32 / 32x32x16 with chipset gfx950).
enum class Bf16MfmaShape { m16n16k32, m32n32k16 };

/// Static facts about one bf16 MFMA shape.
struct Bf16MfmaGeometry {
  /// D (m x n) += A (m x k) * B^T (n x k).
  int64_t m, n, k;
  /// f32 accumulator registers per lane (m * n / 64).
  int64_t accRegisters;
  /// bf16 values of A (or B) per lane.
  int64_t elementsPerLane;
};

/// Elements of A (or B) one lane holds in a bf16 MFMA.
inline constexpr int64_t kBf16MfmaElementsPerLane = 8;

/// Returns 16,16,32,4,8 or 32,32,16,16,8.
Bf16MfmaGeometry getGeometry(Bf16MfmaShape shape);

/// Returns the shape with tile `m` x `n` x `k`, or nullopt if gfx950 has no
/// vector<8xbf16> MFMA of that size.
std::optional<Bf16MfmaShape> getBf16MfmaShape(int64_t m, int64_t n, int64_t k);

/// An element of the A (m x k) or B (n x k) tile.
struct Bf16OperandSlot {
  int64_t row, k;
};

/// Returns the A (or B) element that element `element` (0..7) of `lane`'s
/// vector<8xbf16> holds: row = lane % m, k = 8 * (lane / m) + element, i.e.
/// each lane holds 8 consecutive K values of one row (16 contiguous bytes of
/// a K-contiguous matrix), lane groups of m lanes take consecutive K ranges.
/// The same pattern as the FP4 MFMAs' with 8 instead of 32 values a lane.
Bf16OperandSlot getBf16OperandSlot(Bf16MfmaShape shape, int64_t lane,
                                   int64_t element);

/// Where an operand element lives.
struct Bf16OperandLocation {
  int64_t lane, element;
};

/// Returns the lane and element holding A (or B) element (`row`, `k`); the
/// inverse of getBf16OperandSlot.
Bf16OperandLocation getBf16OperandLocation(Bf16MfmaShape shape, int64_t row,
                                           int64_t k);

/// Returns the element of C/D held by register `reg` of `lane`: the same
/// accumulator layout as the FP4 MFMA of equal m x n (col = lane % n;
/// 16x16: row = 4 * (lane / 16) + reg; 32x32: row = 8 * (reg / 4) +
/// 4 * (lane / 32) + reg % 4).
AccumulatorSlot getBf16AccumulatorSlot(Bf16MfmaShape shape, int64_t lane,
                                       int64_t reg);

/// Returns the lane and register holding C/D element (`row`, `col`).
AccumulatorLocation getBf16AccumulatorLocation(Bf16MfmaShape shape, int64_t row,
                                               int64_t col);

} // namespace mlir::mxfp4::gfx950

#endif // MXFP4_TARGET_GFX950_LANELAYOUT_H

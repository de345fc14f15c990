//===- LaneLayout.cpp - gfx950 FP4 scaled MFMA lane layouts ---------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Target/GFX950/LaneLayout.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir::mxfp4::gfx950;

MfmaGeometry mlir::mxfp4::gfx950::getGeometry(MfmaShape shape) {
  switch (shape) {
  case MfmaShape::m16n16k128:
    return {16, 16, 128, 4, 16, 4};
  case MfmaShape::m32n32k64:
    return {32, 32, 64, 16, 32, 2};
  }
  llvm_unreachable("unknown MfmaShape");
}

std::optional<MfmaShape> mlir::mxfp4::gfx950::getMfmaShape(int64_t m, int64_t n,
                                                           int64_t k) {
  if (m == 16 && n == 16 && k == 128)
    return MfmaShape::m16n16k128;
  if (m == 32 && n == 32 && k == 64)
    return MfmaShape::m32n32k64;
  return std::nullopt;
}

llvm::StringRef mlir::mxfp4::gfx950::getMfmaShapeName(MfmaShape shape) {
  return shape == MfmaShape::m16n16k128 ? "16x16x128" : "32x32x64";
}

bool mlir::mxfp4::gfx950::isValidLane(int64_t lane) {
  return lane >= 0 && lane < kWaveSize;
}

//===----------------------------------------------------------------------===//
// Operands and accumulators
//===----------------------------------------------------------------------===//

OperandSlot mlir::mxfp4::gfx950::getOperandSlot(MfmaShape shape, int64_t lane) {
  int64_t m = getGeometry(shape).m;
  return {lane % m, lane / m};
}

int64_t mlir::mxfp4::gfx950::getOperandLane(MfmaShape shape, int64_t row,
                                            int64_t kBlock) {
  return kBlock * getGeometry(shape).m + row;
}

int64_t mlir::mxfp4::gfx950::getOperandByteOffset(MfmaShape shape, int64_t lane,
                                                  int64_t rowStrideBytes) {
  OperandSlot slot = getOperandSlot(shape, lane);
  return slot.row * rowStrideBytes + slot.kBlock * kFragmentBytes;
}

int64_t mlir::mxfp4::gfx950::getAccumulatorLaneRow(MfmaShape shape,
                                                   int64_t lane) {
  return 4 * (lane / getGeometry(shape).n);
}

int64_t mlir::mxfp4::gfx950::getAccumulatorRegRow(MfmaShape shape,
                                                  int64_t reg) {
  // Groups of 4 registers hold 4 consecutive rows; the 64 / n lane groups
  // interleave between them, so group q starts at row 4 * (64 / n) * q
  // (16x16x128 has a single group).
  int64_t laneGroups = kWaveSize / getGeometry(shape).n;
  return 4 * laneGroups * (reg / 4) + reg % 4;
}

AccumulatorSlot mlir::mxfp4::gfx950::getAccumulatorSlot(MfmaShape shape,
                                                        int64_t lane,
                                                        int64_t reg) {
  return {getAccumulatorLaneRow(shape, lane) + getAccumulatorRegRow(shape, reg),
          lane % getGeometry(shape).n};
}

AccumulatorLocation mlir::mxfp4::gfx950::getAccumulatorLocation(MfmaShape shape,
                                                                int64_t row,
                                                                int64_t col) {
  int64_t laneGroups = kWaveSize / getGeometry(shape).n;
  // row = 4 * laneGroups * q + 4 * group + i with i, group in range.
  int64_t q = row / (4 * laneGroups);
  int64_t group = (row / 4) % laneGroups;
  int64_t i = row % 4;
  return {group * getGeometry(shape).n + col, 4 * q + i};
}

//===----------------------------------------------------------------------===//
// Scales
//===----------------------------------------------------------------------===//

int64_t mlir::mxfp4::gfx950::getNaturalScaleOffset(int64_t kBlocks, int64_t row,
                                                   int64_t kBlock) {
  return row * kBlocks + kBlock;
}

int64_t mlir::mxfp4::gfx950::getPaddedScaleRows(int64_t rows) {
  return llvm::alignTo(rows, kShuffleChunkRows);
}

int64_t mlir::mxfp4::gfx950::getPaddedScaleKBlocks(int64_t kBlocks) {
  return llvm::alignTo(kBlocks, kShuffleChunkKBlocks);
}

int64_t mlir::mxfp4::gfx950::getShuffledScaleBytes(int64_t rows,
                                                   int64_t kBlocks) {
  return getPaddedScaleRows(rows) * getPaddedScaleKBlocks(kBlocks);
}

/// The chunk size in bytes: 32 rows x 8 K blocks = 64 lanes x 4 bytes.
static constexpr int64_t kChunkBytes = kShuffleChunkRows * kShuffleChunkKBlocks;

int64_t mlir::mxfp4::gfx950::getShuffledScaleOffset(MfmaShape shape,
                                                    int64_t /*rows*/,
                                                    int64_t kBlocks,
                                                    int64_t row,
                                                    int64_t kBlock) {
  int64_t chunksPerRow = getPaddedScaleKBlocks(kBlocks) / kShuffleChunkKBlocks;
  int64_t chunk =
      (row / kShuffleChunkRows) * chunksPerRow + kBlock / kShuffleChunkKBlocks;
  int64_t r = row % kShuffleChunkRows;
  int64_t kk = kBlock % kShuffleChunkKBlocks;
  int64_t lane, byte;
  if (shape == MfmaShape::m32n32k64) {
    // view(sm/32, 32, sn/8, 4, 2).permute(0, 2, 4, 1, 3): (kh, r, kq).
    lane = 32 * (kk % 2) + r;
    byte = kk / 2;
  } else {
    // view(sm/32, 2, 16, sn/8, 2, 4).permute(0, 3, 5, 2, 4, 1):
    // (kg, r16, kj, mm).
    lane = 16 * (kk % 4) + r % 16;
    byte = 2 * (kk / 4) + r / 16;
  }
  return chunk * kChunkBytes + 4 * lane + byte;
}

ScaleCoord mlir::mxfp4::gfx950::getShuffledScaleCoord(MfmaShape shape,
                                                      int64_t /*rows*/,
                                                      int64_t kBlocks,
                                                      int64_t offset) {
  int64_t chunksPerRow = getPaddedScaleKBlocks(kBlocks) / kShuffleChunkKBlocks;
  int64_t chunk = offset / kChunkBytes;
  int64_t rowBase = (chunk / chunksPerRow) * kShuffleChunkRows;
  int64_t kBase = (chunk % chunksPerRow) * kShuffleChunkKBlocks;
  int64_t lane = (offset % kChunkBytes) / 4;
  int64_t byte = offset % 4;
  if (shape == MfmaShape::m32n32k64)
    return {rowBase + lane % 32, kBase + 2 * byte + lane / 32};
  return {rowBase + 16 * (byte % 2) + lane % 16,
          kBase + 4 * (byte / 2) + lane / 16};
}

ScaleDwordTile mlir::mxfp4::gfx950::getScaleDwordTile(MfmaShape shape) {
  if (shape == MfmaShape::m32n32k64)
    return {1, 4};
  return {2, 2};
}

ShuffledScaleSource mlir::mxfp4::gfx950::getShuffledScaleSource(MfmaShape shape,
                                                                int64_t kBlocks,
                                                                int64_t rowTile,
                                                                int64_t kStep,
                                                                int64_t lane) {
  MfmaGeometry geometry = getGeometry(shape);
  OperandSlot slot = getOperandSlot(shape, lane);
  int64_t offset = getShuffledScaleOffset(
      shape, /*rows=*/0, kBlocks, rowTile * geometry.m + slot.row,
      kStep * geometry.kBlocks + slot.kBlock);
  return {offset & ~int64_t(3), offset & 3};
}

llvm::Error mlir::mxfp4::gfx950::checkScaleMatrixShape(int64_t rows,
                                                       int64_t kBlocks) {
  // The bound keeps every offset, padded, far from int64 overflow.
  constexpr int64_t kMaxExtent = int64_t(1) << 30;
  if (rows <= 0 || kBlocks <= 0 || rows > kMaxExtent || kBlocks > kMaxExtent)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "gfx950 scale shuffle: invalid scale matrix shape [" +
            llvm::Twine(rows) + ", " + llvm::Twine(kBlocks) +
            "] (both extents must be in 1..2^30)");
  return llvm::Error::success();
}

llvm::Expected<std::vector<uint8_t>> mlir::mxfp4::gfx950::shuffleScales(
    MfmaShape shape, int64_t rows, int64_t kBlocks,
    llvm::ArrayRef<uint8_t> natural, uint8_t padding) {
  if (llvm::Error error = checkScaleMatrixShape(rows, kBlocks))
    return std::move(error);
  if (static_cast<int64_t>(natural.size()) != rows * kBlocks)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "gfx950 scale shuffle: expected " + llvm::Twine(rows * kBlocks) +
            " scale bytes for a [" + llvm::Twine(rows) + ", " +
            llvm::Twine(kBlocks) + "] matrix, got " +
            llvm::Twine(natural.size()));
  std::vector<uint8_t> shuffled(getShuffledScaleBytes(rows, kBlocks), padding);
  for (int64_t row = 0; row < rows; ++row)
    for (int64_t kBlock = 0; kBlock < kBlocks; ++kBlock)
      shuffled[getShuffledScaleOffset(shape, rows, kBlocks, row, kBlock)] =
          natural[getNaturalScaleOffset(kBlocks, row, kBlock)];
  return shuffled;
}

llvm::Expected<std::vector<uint8_t>>
mlir::mxfp4::gfx950::unshuffleScales(MfmaShape shape, int64_t rows,
                                     int64_t kBlocks,
                                     llvm::ArrayRef<uint8_t> shuffled) {
  if (llvm::Error error = checkScaleMatrixShape(rows, kBlocks))
    return std::move(error);
  int64_t expected = getShuffledScaleBytes(rows, kBlocks);
  if (static_cast<int64_t>(shuffled.size()) != expected)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "gfx950 scale shuffle: expected " + llvm::Twine(expected) +
            " shuffled bytes for a [" + llvm::Twine(rows) + ", " +
            llvm::Twine(kBlocks) + "] matrix, got " +
            llvm::Twine(shuffled.size()));
  std::vector<uint8_t> natural(rows * kBlocks);
  for (int64_t row = 0; row < rows; ++row)
    for (int64_t kBlock = 0; kBlock < kBlocks; ++kBlock)
      natural[getNaturalScaleOffset(kBlocks, row, kBlock)] =
          shuffled[getShuffledScaleOffset(shape, rows, kBlocks, row, kBlock)];
  return natural;
}

//===----------------------------------------------------------------------===//
// bf16 MFMAs
//===----------------------------------------------------------------------===//

Bf16MfmaGeometry mlir::mxfp4::gfx950::getGeometry(Bf16MfmaShape shape) {
  switch (shape) {
  case Bf16MfmaShape::m16n16k32:
    return {16, 16, 32, 4, kBf16MfmaElementsPerLane};
  case Bf16MfmaShape::m32n32k16:
    return {32, 32, 16, 16, kBf16MfmaElementsPerLane};
  }
  llvm_unreachable("unknown Bf16MfmaShape");
}

std::optional<Bf16MfmaShape>
mlir::mxfp4::gfx950::getBf16MfmaShape(int64_t m, int64_t n, int64_t k) {
  if (m == 16 && n == 16 && k == 32)
    return Bf16MfmaShape::m16n16k32;
  if (m == 32 && n == 32 && k == 16)
    return Bf16MfmaShape::m32n32k16;
  return std::nullopt;
}

Bf16OperandSlot mlir::mxfp4::gfx950::getBf16OperandSlot(Bf16MfmaShape shape,
                                                        int64_t lane,
                                                        int64_t element) {
  int64_t m = getGeometry(shape).m;
  return {lane % m, kBf16MfmaElementsPerLane * (lane / m) + element};
}

Bf16OperandLocation
mlir::mxfp4::gfx950::getBf16OperandLocation(Bf16MfmaShape shape, int64_t row,
                                            int64_t k) {
  int64_t m = getGeometry(shape).m;
  return {(k / kBf16MfmaElementsPerLane) * m + row,
          k % kBf16MfmaElementsPerLane};
}

/// The FP4 shape with the same accumulator tile.
static MfmaShape getSameAccumulators(Bf16MfmaShape shape) {
  return shape == Bf16MfmaShape::m16n16k32 ? MfmaShape::m16n16k128
                                           : MfmaShape::m32n32k64;
}

AccumulatorSlot mlir::mxfp4::gfx950::getBf16AccumulatorSlot(Bf16MfmaShape shape,
                                                            int64_t lane,
                                                            int64_t reg) {
  return getAccumulatorSlot(getSameAccumulators(shape), lane, reg);
}

AccumulatorLocation
mlir::mxfp4::gfx950::getBf16AccumulatorLocation(Bf16MfmaShape shape,
                                                int64_t row, int64_t col) {
  return getAccumulatorLocation(getSameAccumulators(shape), row, col);
}

//===- LaneLayoutTest.cpp - gfx950 MFMA lane layout tables ----------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Checks the layout functions against the tables of amdgpu.md §2.1/§2.2
// (spot values written out by hand from the text), their bijectivity, and
// the pre-shuffled scale layouts against Triton's view/permute formulas
// written as explicit nested loops.
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Target/GFX950/LaneLayout.h"

#include "llvm/Support/Error.h"

#include <gtest/gtest.h>

#include <set>
#include <utility>

using namespace mlir::mxfp4::gfx950;

namespace {

constexpr MfmaShape kShapes[] = {MfmaShape::m16n16k128, MfmaShape::m32n32k64};

TEST(LaneLayout, Geometry) {
  MfmaGeometry g16 = getGeometry(MfmaShape::m16n16k128);
  EXPECT_EQ(g16.m, 16);
  EXPECT_EQ(g16.n, 16);
  EXPECT_EQ(g16.k, 128);
  EXPECT_EQ(g16.accRegisters, 4);
  EXPECT_EQ(g16.cycles, 16);
  EXPECT_EQ(g16.kBlocks, 4);
  MfmaGeometry g32 = getGeometry(MfmaShape::m32n32k64);
  EXPECT_EQ(g32.m, 32);
  EXPECT_EQ(g32.n, 32);
  EXPECT_EQ(g32.k, 64);
  EXPECT_EQ(g32.accRegisters, 16);
  EXPECT_EQ(g32.cycles, 32);
  EXPECT_EQ(g32.kBlocks, 2);
  EXPECT_EQ(getMfmaShape(16, 16, 128), MfmaShape::m16n16k128);
  EXPECT_EQ(getMfmaShape(32, 32, 64), MfmaShape::m32n32k64);
  EXPECT_FALSE(getMfmaShape(32, 32, 128).has_value());
  EXPECT_FALSE(getMfmaShape(16, 32, 128).has_value());
  EXPECT_EQ(getMfmaShapeName(MfmaShape::m16n16k128), "16x16x128");
  EXPECT_EQ(getMfmaShapeName(MfmaShape::m32n32k64), "32x32x64");
  EXPECT_TRUE(isValidLane(0));
  EXPECT_TRUE(isValidLane(63));
  EXPECT_FALSE(isValidLane(64));
  EXPECT_FALSE(isValidLane(-1));
}

//===----------------------------------------------------------------------===//
// Spot values from amdgpu.md §2.1 / §2.2
//===----------------------------------------------------------------------===//

TEST(LaneLayout, Operand32x32x64Table) {
  // §2.1: row m = l % 32, K elements 32 * (l / 32) .. +31.
  auto s = getOperandSlot(MfmaShape::m32n32k64, 37);
  EXPECT_EQ(s.row, 5);
  EXPECT_EQ(s.kBlock, 1);
  s = getOperandSlot(MfmaShape::m32n32k64, 31);
  EXPECT_EQ(s.row, 31);
  EXPECT_EQ(s.kBlock, 0);
  s = getOperandSlot(MfmaShape::m32n32k64, 63);
  EXPECT_EQ(s.row, 31);
  EXPECT_EQ(s.kBlock, 1);
  // The AMD blog's A fragment address: A + (l%32)*32 + (l/32)*16 bytes for a
  // 32 x 64 FP4 tile (32 bytes per row).
  EXPECT_EQ(getOperandByteOffset(MfmaShape::m32n32k64, 37, 32),
            5 * 32 + 1 * 16);
  EXPECT_EQ(getOperandByteOffset(MfmaShape::m32n32k64, 37, 256), 5 * 256 + 16);
  EXPECT_EQ(getOperandLane(MfmaShape::m32n32k64, 5, 1), 37);
}

TEST(LaneLayout, Operand16x16x128Table) {
  // §2.2: row l % 16, K elements 32 * (l / 16) .. +31.
  auto s = getOperandSlot(MfmaShape::m16n16k128, 37);
  EXPECT_EQ(s.row, 5);
  EXPECT_EQ(s.kBlock, 2);
  s = getOperandSlot(MfmaShape::m16n16k128, 63);
  EXPECT_EQ(s.row, 15);
  EXPECT_EQ(s.kBlock, 3);
  s = getOperandSlot(MfmaShape::m16n16k128, 16);
  EXPECT_EQ(s.row, 0);
  EXPECT_EQ(s.kBlock, 1);
  EXPECT_EQ(getOperandByteOffset(MfmaShape::m16n16k128, 37, 64),
            5 * 64 + 2 * 16);
  EXPECT_EQ(getOperandLane(MfmaShape::m16n16k128, 15, 3), 63);
}

TEST(LaneLayout, Accumulator32x32x64Table) {
  // §2.1: column n = l % 32; register i holds row 8*(i/4) + 4*(l/32) + i%4.
  auto c = getAccumulatorSlot(MfmaShape::m32n32k64, 37, 5);
  EXPECT_EQ(c.row, 8 * (5 / 4) + 4 * (37 / 32) + 5 % 4); // 13
  EXPECT_EQ(c.row, 13);
  EXPECT_EQ(c.col, 5);
  c = getAccumulatorSlot(MfmaShape::m32n32k64, 0, 0);
  EXPECT_EQ(c.row, 0);
  EXPECT_EQ(c.col, 0);
  c = getAccumulatorSlot(MfmaShape::m32n32k64, 32, 0);
  EXPECT_EQ(c.row, 4);
  EXPECT_EQ(c.col, 0);
  c = getAccumulatorSlot(MfmaShape::m32n32k64, 63, 15);
  EXPECT_EQ(c.row, 8 * 3 + 4 + 3); // 31
  EXPECT_EQ(c.col, 31);
  c = getAccumulatorSlot(MfmaShape::m32n32k64, 10, 11);
  EXPECT_EQ(c.row, 8 * 2 + 0 + 3); // 19
  EXPECT_EQ(c.col, 10);
  auto loc = getAccumulatorLocation(MfmaShape::m32n32k64, 13, 5);
  EXPECT_EQ(loc.lane, 37);
  EXPECT_EQ(loc.reg, 5);
  EXPECT_EQ(getAccumulatorLaneRow(MfmaShape::m32n32k64, 37), 4);
  EXPECT_EQ(getAccumulatorRegRow(MfmaShape::m32n32k64, 5), 9);
}

TEST(LaneLayout, Accumulator16x16x128Table) {
  // §2.2: column l % 16, rows 4 * (l / 16) + i.
  auto c = getAccumulatorSlot(MfmaShape::m16n16k128, 37, 2);
  EXPECT_EQ(c.row, 4 * 2 + 2);
  EXPECT_EQ(c.col, 5);
  c = getAccumulatorSlot(MfmaShape::m16n16k128, 63, 3);
  EXPECT_EQ(c.row, 15);
  EXPECT_EQ(c.col, 15);
  c = getAccumulatorSlot(MfmaShape::m16n16k128, 16, 0);
  EXPECT_EQ(c.row, 4);
  EXPECT_EQ(c.col, 0);
  auto loc = getAccumulatorLocation(MfmaShape::m16n16k128, 10, 5);
  EXPECT_EQ(loc.lane, 37);
  EXPECT_EQ(loc.reg, 2);
}

//===----------------------------------------------------------------------===//
// Bijectivity
//===----------------------------------------------------------------------===//

TEST(LaneLayout, OperandCoversTileOnce) {
  for (MfmaShape shape : kShapes) {
    MfmaGeometry g = getGeometry(shape);
    std::vector<int> hits(g.m * g.k, 0);
    std::set<int64_t> offsets;
    for (int64_t lane = 0; lane < kWaveSize; ++lane) {
      OperandSlot s = getOperandSlot(shape, lane);
      ASSERT_GE(s.row, 0);
      ASSERT_LT(s.row, g.m);
      ASSERT_GE(s.kBlock, 0);
      ASSERT_LT(s.kBlock, g.kBlocks);
      EXPECT_EQ(getOperandLane(shape, s.row, s.kBlock), lane);
      for (int64_t e = 0; e < kScaleBlockSize; ++e)
        ++hits[s.row * g.k + s.kBlock * kScaleBlockSize + e];
      // Byte offsets inside a dense m x k FP4 tile: 16 disjoint bytes each.
      int64_t offset = getOperandByteOffset(shape, lane, g.k / 2);
      EXPECT_EQ(offset % kFragmentBytes, 0);
      EXPECT_TRUE(offsets.insert(offset).second);
    }
    for (int h : hits)
      EXPECT_EQ(h, 1) << getMfmaShapeName(shape).str();
    EXPECT_EQ(*offsets.rbegin(), g.m * g.k / 2 - kFragmentBytes);
  }
}

TEST(LaneLayout, AccumulatorCoversTileOnce) {
  for (MfmaShape shape : kShapes) {
    MfmaGeometry g = getGeometry(shape);
    std::vector<int> hits(g.m * g.n, 0);
    for (int64_t lane = 0; lane < kWaveSize; ++lane) {
      for (int64_t reg = 0; reg < g.accRegisters; ++reg) {
        AccumulatorSlot c = getAccumulatorSlot(shape, lane, reg);
        ASSERT_GE(c.row, 0);
        ASSERT_LT(c.row, g.m);
        ASSERT_GE(c.col, 0);
        ASSERT_LT(c.col, g.n);
        ++hits[c.row * g.n + c.col];
        AccumulatorLocation loc = getAccumulatorLocation(shape, c.row, c.col);
        EXPECT_EQ(loc.lane, lane);
        EXPECT_EQ(loc.reg, reg);
        EXPECT_EQ(c.row, getAccumulatorLaneRow(shape, lane) +
                             getAccumulatorRegRow(shape, reg));
        // Registers 4q..4q+3 are four consecutive rows of one column.
        if (reg % 4 != 0) {
          AccumulatorSlot prev = getAccumulatorSlot(shape, lane, reg - 1);
          EXPECT_EQ(prev.row + 1, c.row);
          EXPECT_EQ(prev.col, c.col);
        }
      }
    }
    for (int h : hits)
      EXPECT_EQ(h, 1) << getMfmaShapeName(shape).str();
  }
}

//===----------------------------------------------------------------------===//
// Pre-shuffled scales
//===----------------------------------------------------------------------===//

/// Triton's shuffle for nonkdim 32, literally: the [sm, sn] matrix viewed as
/// (sm/32, 32, sn/8, 4, 2) and permuted (0, 2, 4, 1, 3). Returns, per
/// shuffled byte, the natural (row, kBlock) it holds.
static std::vector<std::pair<int64_t, int64_t>> tritonShuffle32(int64_t sm,
                                                                int64_t sn) {
  std::vector<std::pair<int64_t, int64_t>> out;
  // Output dims in order: d0 = sm/32 (view dim 0), d1 = sn/8 (view dim 2),
  // d2 = 2 (view dim 4), d3 = 32 (view dim 1), d4 = 4 (view dim 3).
  for (int64_t v0 = 0; v0 < sm / 32; ++v0)
    for (int64_t v2 = 0; v2 < sn / 8; ++v2)
      for (int64_t v4 = 0; v4 < 2; ++v4)
        for (int64_t v1 = 0; v1 < 32; ++v1)
          for (int64_t v3 = 0; v3 < 4; ++v3)
            // view element (v0, v1, v2, v3, v4) = flat v0*32 + v1 rows,
            // v2*8 + v3*2 + v4 columns.
            out.push_back({v0 * 32 + v1, v2 * 8 + v3 * 2 + v4});
  return out;
}

/// Triton's shuffle for nonkdim 16: view (sm/32, 2, 16, sn/8, 2, 4),
/// permute (0, 3, 5, 2, 4, 1).
static std::vector<std::pair<int64_t, int64_t>> tritonShuffle16(int64_t sm,
                                                                int64_t sn) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int64_t v0 = 0; v0 < sm / 32; ++v0)
    for (int64_t v3 = 0; v3 < sn / 8; ++v3)
      for (int64_t v5 = 0; v5 < 4; ++v5)
        for (int64_t v2 = 0; v2 < 16; ++v2)
          for (int64_t v4 = 0; v4 < 2; ++v4)
            for (int64_t v1 = 0; v1 < 2; ++v1)
              out.push_back({v0 * 32 + v1 * 16 + v2, v3 * 8 + v4 * 4 + v5});
  return out;
}

TEST(LaneLayout, ShuffledScalesMatchTriton) {
  for (auto [rows, kBlocks] : {std::pair<int64_t, int64_t>{32, 8},
                               {64, 16},
                               {96, 24},
                               {40, 12},
                               {1, 1}}) {
    int64_t sm = getPaddedScaleRows(rows), sn = getPaddedScaleKBlocks(kBlocks);
    EXPECT_EQ(sm % 32, 0);
    EXPECT_EQ(sn % 8, 0);
    EXPECT_EQ(getShuffledScaleBytes(rows, kBlocks), sm * sn);
    for (MfmaShape shape : kShapes) {
      auto expected = shape == MfmaShape::m32n32k64 ? tritonShuffle32(sm, sn)
                                                    : tritonShuffle16(sm, sn);
      ASSERT_EQ(static_cast<int64_t>(expected.size()), sm * sn);
      for (int64_t offset = 0; offset < sm * sn; ++offset) {
        auto [row, kBlock] = expected[offset];
        ASSERT_EQ(getShuffledScaleOffset(shape, rows, kBlocks, row, kBlock),
                  offset)
            << getMfmaShapeName(shape).str() << " row " << row << " kBlock "
            << kBlock;
        ScaleCoord coord = getShuffledScaleCoord(shape, rows, kBlocks, offset);
        EXPECT_EQ(coord.row, row);
        EXPECT_EQ(coord.kBlock, kBlock);
      }
    }
  }
}

TEST(LaneLayout, ShuffledScaleSpotValues) {
  // amdgpu.md §2.5, 32x32x64: lane l = 32*kh + r owns bytes kq =
  // scale[r][2*kq + kh]. Lane 37 (kh 1, r 5), byte 2 -> scale[5][5].
  EXPECT_EQ(getShuffledScaleOffset(MfmaShape::m32n32k64, 32, 8, 5, 5),
            37 * 4 + 2);
  // 16x16x128: lane l = 16*kg + r owns byte (kj, mm) -> 2*kj + mm =
  // scale[16*mm + r][4*kj + kg]. Lane 37 (kg 2, r 5), kj 1, mm 1 ->
  // scale[21][6] at byte 3.
  EXPECT_EQ(getShuffledScaleOffset(MfmaShape::m16n16k128, 32, 8, 21, 6),
            37 * 4 + 3);
  // Second chunk along K starts at byte 256; second chunk row at 256 * (K
  // chunks per row).
  EXPECT_EQ(getShuffledScaleOffset(MfmaShape::m32n32k64, 64, 16, 0, 8), 256);
  EXPECT_EQ(getShuffledScaleOffset(MfmaShape::m32n32k64, 64, 16, 32, 0), 512);
}

TEST(LaneLayout, OneDwordPerLaneCoversFourMfmas) {
  constexpr int64_t kRows = 64, kKBlocks = 16;
  std::vector<uint8_t> natural(kRows * kKBlocks);
  for (size_t i = 0; i < natural.size(); ++i)
    natural[i] = static_cast<uint8_t>(i * 7 + 3);
  for (MfmaShape shape : kShapes) {
    MfmaGeometry g = getGeometry(shape);
    auto shuffled = shuffleScales(shape, kRows, kKBlocks, natural);
    ASSERT_TRUE(static_cast<bool>(shuffled)) << toString(shuffled.takeError());
    ScaleDwordTile tile = getScaleDwordTile(shape);
    EXPECT_EQ(tile.rowTiles * tile.kSteps, 4);
    EXPECT_EQ(tile.rowTiles * g.m, kShuffleChunkRows);
    EXPECT_EQ(tile.kSteps * g.kBlocks, kShuffleChunkKBlocks);
    int64_t rowTiles = kRows / g.m, kSteps = kKBlocks / g.kBlocks;
    for (int64_t rt0 = 0; rt0 < rowTiles; rt0 += tile.rowTiles) {
      for (int64_t ks0 = 0; ks0 < kSteps; ks0 += tile.kSteps) {
        std::set<int64_t> laneDwords;
        for (int64_t lane = 0; lane < kWaveSize; ++lane) {
          std::set<int64_t> dwords, indices;
          for (int64_t dr = 0; dr < tile.rowTiles; ++dr) {
            for (int64_t dk = 0; dk < tile.kSteps; ++dk) {
              int64_t rowTile = rt0 + dr, kStep = ks0 + dk;
              ShuffledScaleSource src =
                  getShuffledScaleSource(shape, kKBlocks, rowTile, kStep, lane);
              EXPECT_EQ(src.dwordOffset % 4, 0);
              dwords.insert(src.dwordOffset);
              indices.insert(src.scalesIdx);
              // Every lane of one MFMA selects the same byte.
              EXPECT_EQ(src.scalesIdx, getShuffledScaleSource(shape, kKBlocks,
                                                              rowTile, kStep, 0)
                                           .scalesIdx);
              // The selected byte is the scale of this lane's operand slot.
              OperandSlot s = getOperandSlot(shape, lane);
              uint8_t want =
                  natural[getNaturalScaleOffset(kKBlocks, rowTile * g.m + s.row,
                                                kStep * g.kBlocks + s.kBlock)];
              EXPECT_EQ((*shuffled)[src.dwordOffset + src.scalesIdx], want);
            }
          }
          EXPECT_EQ(dwords.size(), 1u);
          EXPECT_EQ(indices.size(), 4u);
          laneDwords.insert(*dwords.begin());
        }
        // The 64 lanes read 64 consecutive dwords: one 256-byte chunk.
        EXPECT_EQ(laneDwords.size(), 64u);
        EXPECT_EQ(*laneDwords.rbegin() - *laneDwords.begin(), 252);
        EXPECT_EQ(*laneDwords.begin() % 256, 0);
      }
    }
  }
  // 16x16x128 packing order "op0, op2, op1, op3": byte 2*kStep + rowTile.
  EXPECT_EQ(getShuffledScaleSource(MfmaShape::m16n16k128, 8, 1, 0, 0).scalesIdx,
            1);
  EXPECT_EQ(getShuffledScaleSource(MfmaShape::m16n16k128, 8, 0, 1, 0).scalesIdx,
            2);
  EXPECT_EQ(getShuffledScaleSource(MfmaShape::m32n32k64, 8, 0, 3, 40).scalesIdx,
            3);
}

TEST(LaneLayout, ShuffleRoundTripAndPadding) {
  constexpr int64_t kRows = 40, kKBlocks = 12;
  std::vector<uint8_t> natural(kRows * kKBlocks);
  for (size_t i = 0; i < natural.size(); ++i)
    natural[i] = static_cast<uint8_t>(100 + i % 50);
  for (MfmaShape shape : kShapes) {
    auto shuffled = shuffleScales(shape, kRows, kKBlocks, natural, 0xAA);
    ASSERT_TRUE(static_cast<bool>(shuffled)) << toString(shuffled.takeError());
    ASSERT_EQ(shuffled->size(), 64u * 16u);
    int64_t padding = 0;
    for (int64_t offset = 0; offset < 64 * 16; ++offset) {
      ScaleCoord c = getShuffledScaleCoord(shape, kRows, kKBlocks, offset);
      if (c.row >= kRows || c.kBlock >= kKBlocks) {
        EXPECT_EQ((*shuffled)[offset], 0xAA);
        ++padding;
      }
    }
    EXPECT_EQ(padding, 64 * 16 - kRows * kKBlocks);
    auto back = unshuffleScales(shape, kRows, kKBlocks, *shuffled);
    ASSERT_TRUE(static_cast<bool>(back)) << toString(back.takeError());
    EXPECT_EQ(*back, natural);
  }
}

TEST(LaneLayout, ShuffleRejectsBadInput) {
  std::vector<uint8_t> bytes(10);
  auto bad = shuffleScales(MfmaShape::m32n32k64, 4, 4, bytes);
  ASSERT_FALSE(static_cast<bool>(bad));
  EXPECT_NE(toString(bad.takeError()).find("expected 16 scale bytes"),
            std::string::npos);
  auto badShape = shuffleScales(MfmaShape::m32n32k64, 0, 4, bytes);
  ASSERT_FALSE(static_cast<bool>(badShape));
  EXPECT_NE(toString(badShape.takeError()).find("invalid scale matrix shape"),
            std::string::npos);
  auto badUnshuffle = unshuffleScales(MfmaShape::m16n16k128, 32, 8, bytes);
  ASSERT_FALSE(static_cast<bool>(badUnshuffle));
  EXPECT_NE(toString(badUnshuffle.takeError()).find("expected 256 shuffled"),
            std::string::npos);
}

//===----------------------------------------------------------------------===//
// bf16 MFMAs
//===----------------------------------------------------------------------===//

TEST(LaneLayout, Bf16Geometry) {
  Bf16MfmaGeometry g16 = getGeometry(Bf16MfmaShape::m16n16k32);
  EXPECT_EQ(g16.m, 16);
  EXPECT_EQ(g16.n, 16);
  EXPECT_EQ(g16.k, 32);
  EXPECT_EQ(g16.accRegisters, 4);
  EXPECT_EQ(g16.elementsPerLane, 8);
  Bf16MfmaGeometry g32 = getGeometry(Bf16MfmaShape::m32n32k16);
  EXPECT_EQ(g32.m, 32);
  EXPECT_EQ(g32.n, 32);
  EXPECT_EQ(g32.k, 16);
  EXPECT_EQ(g32.accRegisters, 16);
  EXPECT_EQ(g32.elementsPerLane, 8);
  EXPECT_EQ(getBf16MfmaShape(16, 16, 32), Bf16MfmaShape::m16n16k32);
  EXPECT_EQ(getBf16MfmaShape(32, 32, 16), Bf16MfmaShape::m32n32k16);
  EXPECT_FALSE(getBf16MfmaShape(16, 16, 16).has_value());
  EXPECT_FALSE(getBf16MfmaShape(32, 32, 8).has_value());
}

TEST(LaneLayout, Bf16Operand16x16x32Table) {
  // v_mfma_f32_16x16x32_bf16: lane l supplies row l % 16, K elements
  // 8 * (l / 16) .. +7 (lanes 0-15 K 0..7, 16-31 K 8..15, 32-47 K 16..23,
  // 48-63 K 24..31).
  auto s = getBf16OperandSlot(Bf16MfmaShape::m16n16k32, 37, 3);
  EXPECT_EQ(s.row, 5);
  EXPECT_EQ(s.k, 19);
  s = getBf16OperandSlot(Bf16MfmaShape::m16n16k32, 15, 7);
  EXPECT_EQ(s.row, 15);
  EXPECT_EQ(s.k, 7);
  s = getBf16OperandSlot(Bf16MfmaShape::m16n16k32, 48, 0);
  EXPECT_EQ(s.row, 0);
  EXPECT_EQ(s.k, 24);
  s = getBf16OperandSlot(Bf16MfmaShape::m16n16k32, 63, 7);
  EXPECT_EQ(s.row, 15);
  EXPECT_EQ(s.k, 31);
  auto loc = getBf16OperandLocation(Bf16MfmaShape::m16n16k32, 5, 19);
  EXPECT_EQ(loc.lane, 37);
  EXPECT_EQ(loc.element, 3);
}

TEST(LaneLayout, Bf16Operand32x32x16Table) {
  // v_mfma_f32_32x32x16_bf16: row l % 32, K elements 8 * (l / 32) .. +7.
  auto s = getBf16OperandSlot(Bf16MfmaShape::m32n32k16, 37, 2);
  EXPECT_EQ(s.row, 5);
  EXPECT_EQ(s.k, 10);
  s = getBf16OperandSlot(Bf16MfmaShape::m32n32k16, 31, 7);
  EXPECT_EQ(s.row, 31);
  EXPECT_EQ(s.k, 7);
  s = getBf16OperandSlot(Bf16MfmaShape::m32n32k16, 63, 7);
  EXPECT_EQ(s.row, 31);
  EXPECT_EQ(s.k, 15);
  auto loc = getBf16OperandLocation(Bf16MfmaShape::m32n32k16, 5, 10);
  EXPECT_EQ(loc.lane, 37);
  EXPECT_EQ(loc.element, 2);
}

TEST(LaneLayout, Bf16Accumulators) {
  // 16x16x32: column l % 16, row 4 * (l / 16) + reg.
  auto c = getBf16AccumulatorSlot(Bf16MfmaShape::m16n16k32, 37, 2);
  EXPECT_EQ(c.row, 10);
  EXPECT_EQ(c.col, 5);
  // 32x32x16: column l % 32, row 8 * (reg / 4) + 4 * (l / 32) + reg % 4.
  c = getBf16AccumulatorSlot(Bf16MfmaShape::m32n32k16, 37, 5);
  EXPECT_EQ(c.row, 13);
  EXPECT_EQ(c.col, 5);
  c = getBf16AccumulatorSlot(Bf16MfmaShape::m32n32k16, 63, 15);
  EXPECT_EQ(c.row, 31);
  EXPECT_EQ(c.col, 31);
  auto loc = getBf16AccumulatorLocation(Bf16MfmaShape::m32n32k16, 13, 5);
  EXPECT_EQ(loc.lane, 37);
  EXPECT_EQ(loc.reg, 5);
}

TEST(LaneLayout, Bf16LayoutsCoverTilesOnce) {
  for (Bf16MfmaShape shape :
       {Bf16MfmaShape::m16n16k32, Bf16MfmaShape::m32n32k16}) {
    Bf16MfmaGeometry g = getGeometry(shape);
    std::set<std::pair<int64_t, int64_t>> operands, accumulators;
    for (int64_t lane = 0; lane < kWaveSize; ++lane) {
      for (int64_t e = 0; e < g.elementsPerLane; ++e) {
        Bf16OperandSlot s = getBf16OperandSlot(shape, lane, e);
        ASSERT_LT(s.row, g.m);
        ASSERT_LT(s.k, g.k);
        operands.insert({s.row, s.k});
        Bf16OperandLocation l = getBf16OperandLocation(shape, s.row, s.k);
        EXPECT_EQ(l.lane, lane);
        EXPECT_EQ(l.element, e);
      }
      for (int64_t r = 0; r < g.accRegisters; ++r) {
        AccumulatorSlot s = getBf16AccumulatorSlot(shape, lane, r);
        accumulators.insert({s.row, s.col});
        AccumulatorLocation l = getBf16AccumulatorLocation(shape, s.row, s.col);
        EXPECT_EQ(l.lane, lane);
        EXPECT_EQ(l.reg, r);
      }
    }
    EXPECT_EQ(static_cast<int64_t>(operands.size()), g.m * g.k);
    EXPECT_EQ(static_cast<int64_t>(accumulators.size()), g.m * g.n);
  }
}

} // namespace

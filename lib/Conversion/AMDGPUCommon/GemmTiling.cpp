//===- GemmTiling.cpp - shared pieces of the gfx950 GEMM kernels ----------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Conversion/AMDGPUCommon/GemmTiling.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::mxfp4;
using namespace mlir::mxfp4::gfx950;
using namespace mlir::mxfp4::kernels;

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

std::pair<Value, Value> gfx950::remapTileForXcds(KernelBuilder &kb, Value pid,
                                                 int64_t tilesM,
                                                 int64_t tilesN) {
  OpBuilder &b = kb.builder();
  Location loc = kb.location();
  int64_t tiles = tilesM * tilesN;
  int64_t perXcd = ceilDiv(tiles, kXcds);
  int64_t tall = tiles % kXcds == 0 ? kXcds : tiles % kXcds;
  Value xcd = kb.rem(pid, kXcds), local = kb.div(pid, kXcds);
  Value isTall = kb.lt(xcd, tall);
  Value tallPid = kb.add(kb.mul(xcd, perXcd), local);
  // Below `tall` XCDs each hold perXcd tiles, the rest perXcd - 1.
  Value shortPid = kb.add(
      kb.add(kb.idx(tall * perXcd),
             kb.mul(arith::SubIOp::create(b, loc, xcd, kb.idx(tall)),
                    perXcd - 1)),
      local);
  Value linear = kb.select(isTall, tallPid, shortPid);

  int64_t perGroup = kGroupM * tilesN;
  Value group = kb.div(linear, perGroup);
  Value firstM = kb.mul(group, kGroupM);
  Value groupRows = kb.min(
      arith::SubIOp::create(b, loc, kb.idx(tilesM), firstM), kb.idx(kGroupM));
  Value inGroup = kb.rem(linear, perGroup);
  Value tm =
      kb.add(firstM, arith::RemUIOp::create(b, loc, inGroup, groupRows));
  Value tn = arith::DivUIOp::create(b, loc, inGroup, groupRows);
  return {tm, tn};
}

KSplit gfx950::splitK(int64_t workgroups, int64_t steps,
                      int64_t minStepsPerSplit, int64_t maxSplits) {
  if (workgroups >= kComputeUnits || steps < 2 * minStepsPerSplit ||
      maxSplits < 2)
    return {1, steps};
  int64_t splits = std::min({ceilDiv(kComputeUnits, workgroups),
                             steps / minStepsPerSplit, maxSplits});
  int64_t perSplit = ceilDiv(steps, splits);
  // Rounding the range up can leave the last splits empty: drop them.
  return {ceilDiv(steps, perSplit), perSplit};
}

Value gfx950::swizzledSlot(KernelBuilder &kb, Value chunk, Value row) {
  return arith::XOrIOp::create(kb.builder(), kb.location(), chunk,
                               kb.rem(row, 8));
}

void gfx950::copySwizzledRowsToLds(
    KernelBuilder &kb, Value src, Value lds, Value dstBase, int64_t tileRows,
    VectorType transfer, Value wave, Value lane,
    llvm::function_ref<Value(Value groupRow, Value laneRow, Value chunk)>
        source) {
  OpBuilder &b = kb.builder();
  Location loc = kb.location();
  Value laneRow = kb.div(lane, 8), laneSlot = kb.rem(lane, 8);
  // Rows of a group start at a multiple of 8: row % 8 is laneRow.
  Value laneChunk = arith::XOrIOp::create(b, loc, laneSlot, laneRow);
  int64_t rowElements =
      kLdsRowBytes * 8 /
      cast<MemRefType>(lds.getType()).getElementType().getIntOrFloatBitWidth();
  for (int64_t t = 0; t < tileRows / 32; ++t) {
    Value rowBase = kb.mul(kb.add(wave, kb.idx(4 * t)), 8);
    Value srcIndex = source(rowBase, laneRow, laneChunk);
    Value dstIndex =
        kb.add(dstBase, kb.mul(rowBase, rowElements));
    amdgpu::GatherToLDSOp::create(b, loc, src, ValueRange{srcIndex}, lds,
                                  ValueRange{dstIndex},
                                  TypeAttr::get(transfer));
  }
}

//===- Mfma.cpp - bf16 MFMA and LDS building blocks of attention ----------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Mfma.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::mxfp4;
using namespace mlir::mxfp4::kernels;
using namespace mlir::mxfp4::gfx950;

MfmaLane gfx950::getMfmaLane(KernelBuilder &kb, Value lane) {
  return {lane, kb.rem(lane, kMfmaTile), kb.div(lane, kMfmaTile)};
}

Value LdsTile::offset(KernelBuilder &kb, Value row, Value col) const {
  return kb.add(base, kb.add(kb.mul(row, stride()), col));
}

static VectorType bf16Vector(KernelBuilder &kb, int64_t n) {
  return VectorType::get({n}, kb.builder().getBF16Type());
}

Value gfx950::loadAsBf16(KernelBuilder &kb, Value src, ValueRange indices,
                         int64_t count) {
  OpBuilder &b = kb.builder();
  Type element = cast<MemRefType>(src.getType()).getElementType();
  Value x = vector::LoadOp::create(b, kb.location(),
                                   VectorType::get({count}, element), src,
                                   indices);
  if (!element.isBF16())
    x = arith::TruncFOp::create(b, kb.location(), bf16Vector(kb, count), x);
  return x;
}

void gfx950::copyRowsToLds(KernelBuilder &kb, Value src, RowIndices at,
                           const LdsTile &tile, Value tid, int64_t threads) {
  OpBuilder &b = kb.builder();
  int64_t chunksPerRow = tile.cols / kOperandElements;
  int64_t chunks = tile.rows * chunksPerRow;
  for (int64_t i = 0; i < chunks; i += threads) {
    Value chunk = kb.add(tid, i);
    Value row = kb.div(chunk, chunksPerRow);
    Value col = kb.mul(kb.rem(chunk, chunksPerRow), kOperandElements);
    auto body = [&] {
      Value x = loadAsBf16(kb, src, at(row, col), kOperandElements);
      vector::StoreOp::create(b, kb.location(), x, tile.memory,
                              ValueRange{tile.offset(kb, row, col)});
    };
    if (i + threads <= chunks)
      body();
    else
      kb.when(kb.lt(chunk, chunks), body);
  }
}

void gfx950::copyRowsToLdsTransposed(KernelBuilder &kb, Value src,
                                     RowIndices at, const LdsTile &tile,
                                     int64_t srcRows, int64_t srcCols,
                                     Value tid, int64_t threads) {
  OpBuilder &b = kb.builder();
  Location loc = kb.location();
  int64_t chunksPerRow = srcCols / kOperandElements;
  int64_t items = srcRows / 2 * chunksPerRow;
  for (int64_t i = 0; i < items; i += threads) {
    Value item = kb.add(tid, i);
    Value row = kb.mul(kb.div(item, chunksPerRow), 2);
    Value col = kb.mul(kb.rem(item, chunksPerRow), kOperandElements);
    auto body = [&] {
      Value first = loadAsBf16(kb, src, at(row, col), kOperandElements);
      Value second =
          loadAsBf16(kb, src, at(kb.add(row, 1), col), kOperandElements);
      for (int64_t e = 0; e < kOperandElements; ++e) {
        Value pair = vector::ShuffleOp::create(
            b, loc, first, second, ArrayRef<int64_t>{e, kOperandElements + e});
        vector::StoreOp::create(
            b, loc, pair, tile.memory,
            ValueRange{tile.offset(kb, kb.add(col, e), row)});
      }
    };
    if (i + threads <= items)
      body();
    else
      kb.when(kb.lt(item, items), body);
  }
}

Value gfx950::loadOperand(KernelBuilder &kb, const LdsTile &tile,
                          const MfmaLane &lane, Value row0, Value k0) {
  Value row = kb.add(row0, lane.row);
  Value k = kb.add(k0, kb.mul(lane.group, kOperandElements));
  return vector::LoadOp::create(kb.builder(), kb.location(),
                                bf16Vector(kb, kOperandElements), tile.memory,
                                ValueRange{tile.offset(kb, row, k)});
}

Value gfx950::loadOperandInAccumulatorOrder(KernelBuilder &kb,
                                            const LdsTile &tile,
                                            const MfmaLane &lane, Value row0,
                                            Value k0) {
  OpBuilder &b = kb.builder();
  Location loc = kb.location();
  Value row = kb.add(row0, lane.row);
  Value k = kb.add(k0, kb.mul(lane.group, 4));
  auto quad = bf16Vector(kb, 4);
  Value low = vector::LoadOp::create(b, loc, quad, tile.memory,
                                     ValueRange{tile.offset(kb, row, k)});
  Value high = vector::LoadOp::create(
      b, loc, quad, tile.memory,
      ValueRange{tile.offset(kb, row, kb.add(k, kMfmaTile))});
  return vector::ShuffleOp::create(b, loc, low, high,
                                   ArrayRef<int64_t>{0, 1, 2, 3, 4, 5, 6, 7});
}

Value gfx950::accumulatorsAsOperand(KernelBuilder &kb, Value first,
                                    Value second) {
  OpBuilder &b = kb.builder();
  Location loc = kb.location();
  Value both = vector::ShuffleOp::create(
      b, loc, first, second, ArrayRef<int64_t>{0, 1, 2, 3, 4, 5, 6, 7});
  return arith::TruncFOp::create(b, loc, bf16Vector(kb, kOperandElements),
                                 both);
}

Value gfx950::mfma(KernelBuilder &kb, Value a, Value b, Value acc) {
  return amdgpu::MFMAOp::create(kb.builder(), kb.location(), acc.getType(),
                                kMfmaTile, kMfmaTile, kMfmaK, /*blocks=*/1, a,
                                b, acc);
}

Value gfx950::zeroAccumulator(KernelBuilder &kb) {
  OpBuilder &b = kb.builder();
  auto type = VectorType::get({4}, b.getF32Type());
  return arith::ConstantOp::create(b, kb.location(), b.getZeroAttr(type));
}

Value gfx950::reduceOverColumn(KernelBuilder &kb, Value x, bool isMax) {
  OpBuilder &b = kb.builder();
  Location loc = kb.location();
  for (int64_t offset : {16, 32}) {
    Value other = gpu::ShuffleOp::create(b, loc, x, offset, kWaveLanes,
                                         gpu::ShuffleMode::XOR)
                      .getShuffleResult();
    x = isMax ? arith::MaximumFOp::create(b, loc, x, other).getResult()
              : arith::AddFOp::create(b, loc, x, other).getResult();
  }
  return x;
}

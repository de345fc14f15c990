//===- ShuffleScalesKernel.cpp - scales into the gfx950 GEMM's layout -----===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Rewrites canonical scales that come from outside the function into the
// pre-shuffled layout the GEMM reads (the quantize kernels write that layout
// directly).
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::mxfp4;
using namespace mlir::mxfp4::gfx950;
using namespace mlir::mxfp4::kernels;

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t gfx950::shuffleScalesWorkgroups(int64_t rows, int64_t kBlocks) {
  return ceilDiv(getShuffledScaleBytes(rows, kBlocks), kWorkgroupSize);
}

Value gfx950::emitShuffledScaleOffset(KernelBuilder &kb, Value row,
                                     Value kBlock, int64_t kBlocks) {
  int64_t groups = (kBlocks + 7) / 8;
  Value g = kb.div(row, 32), mm = kb.div(kb.rem(row, 32), 16),
        r = kb.rem(row, 16);
  Value q = kb.div(kBlock, 8), s = kb.div(kb.rem(kBlock, 8), 4),
        kg = kb.rem(kBlock, 4);
  Value lane = kb.add(kb.mul(kg, 16), r);
  Value dword = kb.add(kb.mul(kb.add(kb.mul(g, groups), q), 64), lane);
  return kb.add(kb.add(kb.mul(dword, 4), kb.mul(s, 2)), mm);
}

static int64_t roundUp(int64_t a, int64_t b) { return ceilDiv(a, b) * b; }

ScaleLayout gfx950::getShuffledScaleLayout() {
  ScaleLayout layout;
  layout.getBytes = getShuffledScaleBytes;
  layout.emitStore = [](KernelBuilder &kb, Value buffer, Value scale,
                        Value valid, Value row, Value kBlock, int64_t rows,
                        int64_t kBlocks) {
    OpBuilder &b = kb.builder();
    int64_t size = getShuffledScaleBytes(rows, kBlocks);
    Value inLayout = kb.andI(kb.lt(row, roundUp(rows, 32)),
                             kb.lt(kBlock, roundUp(kBlocks, 8)));
    Value neutral = arith::ConstantIntOp::create(b, kb.location(), 127, 8);
    kb.store(kb.select(valid, scale, neutral), buffer, inLayout,
             emitShuffledScaleOffset(kb, row, kBlock, kBlocks), size);
  };
  // 32 rows and 8 K blocks of 32 elements, for a job of either orientation.
  layout.padTo = 256;
  return layout;
}

gpu::GPUFuncOp gfx950::buildShuffleScalesKernel(OpBuilder &b, Location loc,
                                                gpu::GPUModuleOp module,
                                                StringRef name, int64_t rows,
                                                int64_t kBlocks) {
  MLIRContext *ctx = b.getContext();
  Type i8 = b.getI8Type();
  int64_t size = getShuffledScaleBytes(rows, kBlocks);
  int64_t paddedBlocks = (kBlocks + 7) / 8 * 8;
  gpu::GPUFuncOp func =
      createKernel(b, loc, module, name,
                   {globalBuffer(ctx, rows * kBlocks, i8),
                    globalBuffer(ctx, size, i8)});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&func.getBody().front());
  KernelBuilder kb(b, loc);
  Value canonical = kb.buffer(func.getArgument(0));
  Value shuffled = kb.buffer(func.getArgument(1));
  // Thread t handles (row, K block) = (t / paddedBlocks, t % paddedBlocks).
  Value t = kb.add(kb.mul(kb.blockId(), kWorkgroupSize), kb.threadId());
  Value row = kb.div(t, paddedBlocks), kBlock = kb.rem(t, paddedBlocks);
  Value inLayout = kb.lt(t, size);
  Value valid = kb.andI(kb.lt(row, rows), kb.lt(kBlock, kBlocks));
  Value byte = memref::LoadOp::create(
      b, loc, canonical,
      ValueRange{kb.maskedOffset(valid, kb.add(kb.mul(row, kBlocks), kBlock),
                                 rows * kBlocks)});
  byte = kb.select(valid, byte, arith::ConstantIntOp::create(b, loc, 127, 8));
  Value offset = emitShuffledScaleOffset(kb, row, kBlock, kBlocks);
  memref::StoreOp::create(b, loc, byte, shuffled,
                          ValueRange{kb.maskedOffset(inLayout, offset, size)});
  gpu::ReturnOp::create(b, loc);
  return func;
}

//===- DequantizeKernel.cpp - dequantize and scale shuffles on gfx950 -----===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// dequantize: one 32-element block a lane, 16 bytes in, 16
// `v_cvt_scalef32_pk_f32_fp4` conversions, 128 (f32) or 64 (bf16) bytes out.
// The scale shuffle rewrites canonical scales that come from outside the
// function into the layout the GEMM reads.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"
#include "Kernels.h"

#include "../MXFP4ToLinalg/Numerics.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::mxfp4;
using namespace mlir::mxfp4::gfx950;
namespace num = mlir::mxfp4::numerics;

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t gfx950::dequantizeWorkgroups(const DequantizeConfig &c) {
  return ceilDiv(c.rows * c.cols / 32, kWorkgroupSize);
}

gpu::GPUFuncOp gfx950::buildDequantizeKernel(OpBuilder &b, Location loc,
                                             gpu::GPUModuleOp module,
                                             StringRef name,
                                             const DequantizeConfig &c) {
  MLIRContext *ctx = b.getContext();
  Type i8 = b.getI8Type(), i32 = b.getI32Type(), f32 = b.getF32Type();
  int64_t blocks = c.rows * c.cols / 32;
  gpu::GPUFuncOp func = createKernel(
      b, loc, module, name,
      {globalBuffer(ctx, c.rows * c.cols / 2, i8), globalBuffer(ctx, blocks, i8),
       globalBuffer(ctx, c.rows * c.cols, c.resultType)});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&func.getBody().front());
  KernelBuilder kb(b, loc);
  Value values = kb.buffer(func.getArgument(0));
  Value scales = kb.buffer(func.getArgument(1));
  Value result = kb.buffer(func.getArgument(2));

  // Blocks are consecutive in memory whatever the shape: block i is bytes
  // 16 i .. 16 i + 15 and scale i.
  Value block = kb.add(kb.mul(kb.blockId(), kWorkgroupSize), kb.threadId());
  Value valid = kb.lt(block, blocks);
  Value codes = vector::LoadOp::create(
      b, loc, VectorType::get({16}, i8), values,
      ValueRange{kb.maskedOffset(valid, kb.mul(block, 16), blocks * 16)});
  Value byte = arith::ExtUIOp::create(
      b, loc, i32,
      memref::LoadOp::create(b, loc, scales,
                             ValueRange{kb.maskedOffset(valid, block, blocks)}));
  auto c32 = [&](int64_t v) { return num::constant(b, loc, i32, v); };
  // Byte 0 (2^-127) is not a normal f32 scale: expand with 2^-126 and halve
  // (exact). Byte 255 makes the block NaN.
  Value isZero =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, byte, c32(0));
  Value isNaN =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, byte, c32(255));
  Value convByte = arith::SelectOp::create(
      b, loc, isZero, c32(1),
      arith::SelectOp::create(b, loc, isNaN, c32(127), byte));
  Value scale =
      num::fromBits(b, loc, arith::ShLIOp::create(b, loc, convByte, c32(23)));
  SmallVector<Value> halves;
  auto wordType = VectorType::get({8}, b.getType<Float4E2M1FNType>());
  for (int64_t w = 0; w < 4; ++w) {
    Value bytes = vector::ExtractStridedSliceOp::create(
        b, loc, codes, ArrayRef<int64_t>{4 * w}, ArrayRef<int64_t>{4},
        ArrayRef<int64_t>{1});
    Value word = vector::BitCastOp::create(b, loc, wordType, bytes);
    for (int64_t p = 0; p < 4; ++p) {
      Value pair = amdgpu::ScaledExtPackedOp::create(
          b, loc, VectorType::get({2}, f32), word, scale, p);
      halves.push_back(vector::ExtractOp::create(b, loc, pair, 0));
      halves.push_back(vector::ExtractOp::create(b, loc, pair, 1));
    }
  }
  auto vecF32 = VectorType::get({32}, f32);
  Value out = vector::FromElementsOp::create(b, loc, vecF32, halves);
  Value factor = arith::SelectOp::create(
      b, loc, isZero, num::constantF32(b, loc, f32, 0.5f),
      arith::SelectOp::create(
          b, loc, isNaN,
          num::constantF32(b, loc, f32, std::numeric_limits<float>::quiet_NaN()),
          num::constantF32(b, loc, f32, 1.0f)));
  out = arith::MulFOp::create(b, loc, out,
                              vector::BroadcastOp::create(b, loc, vecF32, factor));
  if (!c.resultType.isF32())
    out = arith::TruncFOp::create(b, loc, VectorType::get({32}, c.resultType),
                                  out);
  vector::StoreOp::create(
      b, loc, out, result,
      ValueRange{kb.maskedOffset(valid, kb.mul(block, 32), c.rows * c.cols)});
  gpu::ReturnOp::create(b, loc);
  return func;
}

int64_t gfx950::shuffleScalesWorkgroups(int64_t rows, int64_t kBlocks) {
  return ceilDiv(getShuffledScaleBytes(rows, kBlocks), kWorkgroupSize);
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

//===- DequantizeKernel.cpp - dequantize on GPUs
//---------------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// One 32-element block a thread: 16 bytes in, 128 (f32) or 64 (bf16) bytes
// out. Blocks are expanded by the target's conversion instruction where it
// has one (gfx950: `v_cvt_scalef32_pk_f32_fp4`), else by the CPU path's
// integer formulation (docs/Semantics.md).
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Conversion/MXFP4ToGPUCommon/Kernels.h"

#include "mxfp4/Dialect/MXFP4/Utils/Numerics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::mxfp4;
using namespace mlir::mxfp4::kernels;
namespace num = mlir::mxfp4::numerics;

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t kernels::dequantizeWorkgroups(const DequantizeConfig &c) {
  return ceilDiv(c.rows * c.cols / 32, kWorkgroupSize);
}

/// The CPU path's expansion of a block (packed codes vector<16xi8>, scale
/// byte i32 in [0, 254]): each element is its E2M1 magnitude times 2^(s -
/// 127), exact, with the code's sign.
static Value expandPortably(OpBuilder &b, Location loc, Value codes,
                            Value byte) {
  auto vecI32 = VectorType::get({32}, b.getI32Type());
  auto half = VectorType::get({16}, b.getI32Type());
  auto cv = [&](VectorType t, int64_t v) {
    return num::constant(b, loc, t, v);
  };
  Value bytes = arith::ExtUIOp::create(b, loc, half, codes);
  Value lo = arith::AndIOp::create(b, loc, bytes, cv(half, 15));
  Value hi = arith::ShRUIOp::create(b, loc, bytes, cv(half, 4));
  SmallVector<int64_t> interleave;
  for (int64_t j = 0; j < 16; ++j)
    interleave.append({j, 16 + j});
  Value code = vector::ShuffleOp::create(b, loc, lo, hi, interleave);
  Value magnitude = num::decodeE2M1Magnitude(
      b, loc, arith::AndIOp::create(b, loc, code, cv(vecI32, 7)));
  Value scale = num::decodeE8M0(b, loc, byte);
  Value product = arith::MulFOp::create(
      b, loc, magnitude,
      vector::BroadcastOp::create(b, loc, magnitude.getType(), scale));
  Value sign = arith::ShLIOp::create(
      b, loc, arith::AndIOp::create(b, loc, code, cv(vecI32, 8)),
      cv(vecI32, 28));
  return num::fromBits(
      b, loc, arith::OrIOp::create(b, loc, num::bitsOf(b, loc, product), sign));
}

gpu::GPUFuncOp kernels::buildDequantizeKernel(OpBuilder &b, Location loc,
                                              gpu::GPUModuleOp module,
                                              StringRef name,
                                              const DequantizeConfig &c) {
  MLIRContext *ctx = b.getContext();
  Type i8 = b.getI8Type(), i32 = b.getI32Type(), f32 = b.getF32Type();
  int64_t blocks = c.rows * c.cols / 32;
  gpu::GPUFuncOp func =
      createKernel(b, loc, module, name,
                   {globalBuffer(ctx, c.rows * c.cols / 2, i8),
                    globalBuffer(ctx, blocks, i8),
                    globalBuffer(ctx, c.rows * c.cols, c.resultType)});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&func.getBody().front());
  KernelBuilder kb(b, loc, c.bounds);
  Value values = kb.buffer(func.getArgument(0));
  Value scales = kb.buffer(func.getArgument(1));
  Value result = kb.buffer(func.getArgument(2));

  // Blocks are consecutive in memory whatever the shape: block i is bytes
  // 16 i .. 16 i + 15 and scale i.
  Value block = kb.add(kb.mul(kb.blockId(), kWorkgroupSize), kb.threadId());
  Value valid = kb.lt(block, blocks);
  Value codes = kb.load(VectorType::get({16}, i8), values, valid,
                        kb.mul(block, 16), blocks * 16, /*alignment=*/16);
  Value byte = arith::ExtUIOp::create(
      b, loc, i32, kb.load(i8, scales, valid, block, blocks));
  auto c32 = [&](int64_t v) { return num::constant(b, loc, i32, v); };
  Value isNaN =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, byte, c32(255));
  auto vecF32 = VectorType::get({32}, f32);
  Value out;
  if (c.expand) {
    // Conversion instructions take the scale as a normal f32: byte 0
    // (2^-127) expands with 2^-126 and is halved after (exact).
    Value isZero =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, byte, c32(0));
    Value convByte = arith::SelectOp::create(
        b, loc, isZero, c32(1),
        arith::SelectOp::create(b, loc, isNaN, c32(127), byte));
    out = c.expand(b, loc, codes, convByte);
    Value factor = arith::SelectOp::create(b, loc, isZero,
                                           num::constantF32(b, loc, f32, 0.5f),
                                           num::constantF32(b, loc, f32, 1.0f));
    out = arith::MulFOp::create(
        b, loc, out, vector::BroadcastOp::create(b, loc, vecF32, factor));
  } else {
    out = expandPortably(
        b, loc, codes, arith::SelectOp::create(b, loc, isNaN, c32(127), byte));
  }
  // Scale byte 255 makes the block NaN.
  out = arith::SelectOp::create(
      b, loc, isNaN,
      vector::BroadcastOp::create(
          b, loc, vecF32,
          num::constantF32(b, loc, f32,
                           std::numeric_limits<float>::quiet_NaN())),
      out);
  if (!c.resultType.isF32())
    out = c.expand ? Value(arith::TruncFOp::create(
                         b, loc, VectorType::get({32}, c.resultType), out))
                   : num::truncToBF16(b, loc, out);
  kb.store(out, result, valid, kb.mul(block, 32), c.rows * c.cols,
           /*alignment=*/16);
  gpu::ReturnOp::create(b, loc);
  return func;
}

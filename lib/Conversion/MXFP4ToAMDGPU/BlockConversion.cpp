//===- BlockConversion.cpp - gfx950 FP4 conversion instructions -----------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The shared quantize and dequantize kernels convert blocks with gfx950's
// scaled FP4 conversions: `v_cvt_scalef32_pk_fp4_f32` (two values a
// conversion, round to nearest even, saturating) takes the block's scale as
// an f32 power of two, `v_cvt_scalef32_pk_f32_fp4` expands. The scale byte
// itself follows docs/Semantics.md (integer arithmetic on the amax
// encoding, as on the CPU). Stochastic rounding does not use the hardware's
// `_sr_` conversion, whose use of its random operand is undocumented.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "mxfp4/Dialect/MXFP4/Utils/Numerics.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::mxfp4;
using namespace mlir::mxfp4::gfx950;
namespace num = mlir::mxfp4::numerics;

std::pair<Value, Value> gfx950::convertBlock(OpBuilder &b, Location loc,
                                             Value v, ScaleRule rule) {
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  auto vecI32 = VectorType::get({32}, i32);
  auto c = [&](int64_t x) { return num::constant(b, loc, i32, x); };
  Value magnitude = arith::AndIOp::create(b, loc, num::bitsOf(b, loc, v),
                                          num::constant(b, loc, vecI32,
                                                        0x7FFFFFFF));
  // An integer max of sign-cleared encodings orders magnitudes and puts Inf
  // and NaN above every finite value.
  Value amax = vector::ReductionOp::create(b, loc, vector::CombiningKind::MAXSI,
                                           magnitude);
  Value byte = num::scaleByte(b, loc, amax, rule);
  // The conversion takes the scale as an f32 power of two. Byte 0 (2^-127)
  // is not a normal f32: convert 2x with 2^-126 instead (exact). A NaN
  // block's codes are zeroed below.
  Value isZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, byte,
                                       c(0));
  Value isNaN = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, byte,
                                      c(255));
  Value convByte = arith::SelectOp::create(
      b, loc, isZero, c(1), arith::SelectOp::create(b, loc, isNaN, c(127), byte));
  Value scale = num::fromBits(
      b, loc, arith::ShLIOp::create(b, loc, convByte, c(23)));
  Value pre = arith::SelectOp::create(b, loc, isZero,
                                      num::constantF32(b, loc, f32, 2.0f),
                                      num::constantF32(b, loc, f32, 1.0f));
  Value x = arith::MulFOp::create(
      b, loc, v, vector::BroadcastOp::create(b, loc, v.getType(), pre));

  auto wordType = VectorType::get({8}, b.getType<Float4E2M1FNType>());
  auto bytesType = VectorType::get({4}, b.getI8Type());
  Value packed = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(VectorType::get({16}, b.getI8Type()),
                                     b.getI8IntegerAttr(0)));
  Value zeroWord = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(bytesType, b.getI8IntegerAttr(0)));
  for (int64_t w = 0; w < 4; ++w) {
    Value word = vector::BitCastOp::create(b, loc, wordType, zeroWord);
    for (int64_t p = 0; p < 4; ++p) {
      Value pair = vector::ExtractStridedSliceOp::create(
          b, loc, x, ArrayRef<int64_t>{8 * w + 2 * p}, ArrayRef<int64_t>{2},
          ArrayRef<int64_t>{1});
      word = amdgpu::PackedScaledTruncOp::create(b, loc, wordType, pair, scale,
                                                 p, word);
    }
    Value bytes = vector::BitCastOp::create(b, loc, bytesType, word);
    bytes = arith::SelectOp::create(b, loc, isNaN, zeroWord, bytes);
    packed = vector::InsertStridedSliceOp::create(b, loc, bytes, packed,
                                                  ArrayRef<int64_t>{4 * w},
                                                  ArrayRef<int64_t>{1});
  }
  return {packed, byte};
}


Value gfx950::expandBlock(OpBuilder &b, Location loc, Value codes,
                          Value byte) {
  Type f32 = b.getF32Type();
  Value scale = num::fromBits(
      b, loc,
      arith::ShLIOp::create(b, loc, byte,
                            num::constant(b, loc, b.getI32Type(), 23)));
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
  return vector::FromElementsOp::create(b, loc, VectorType::get({32}, f32),
                                        halves);
}

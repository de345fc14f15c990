//===- QuantizeToLinalg.cpp - quantize/dequantize to linalg ---------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Lowers mxfp4.quantize and mxfp4.dequantize to linalg.generic ops on a view
// of the tensor whose blocked axis is split into [blocks, 32]. The generic
// bodies are the integer formulations of docs/Semantics.md sections 2 and 3.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"
#include "Numerics.h"
#include "TensorUtils.h"

#include "mxfp4/Dialect/MXFP4/IR/MXFP4Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::mxfp4;
namespace num = mlir::mxfp4::numerics;

namespace {

/// Iterator types of a rank `rank` loop nest, all parallel except `reduced`
/// (pass -1 for none).
SmallVector<utils::IteratorType> iterators(int64_t rank, int64_t reduced) {
  SmallVector<utils::IteratorType> types(rank, utils::IteratorType::parallel);
  if (reduced >= 0)
    types[reduced] = utils::IteratorType::reduction;
  return types;
}

/// The row-major linear index, as i64, of the element that the current
/// iteration of a generic over the expanded view of `source` (blocked axis
/// `axis` split in two) addresses in `source` itself. `strides` are the
/// row-major strides of `source` (index values computed outside the body).
Value linearIndex(OpBuilder &b, Location loc, int64_t axis,
                  ArrayRef<Value> strides) {
  Value linear = arith::ConstantIndexOp::create(b, loc, 0);
  int64_t rank = strides.size();
  for (int64_t d = 0; d < rank; ++d) {
    Value idx;
    if (d < axis) {
      idx = linalg::IndexOp::create(b, loc, d);
    } else if (d == axis) {
      Value block = linalg::IndexOp::create(b, loc, d);
      Value inner = linalg::IndexOp::create(b, loc, d + 1);
      idx = arith::AddIOp::create(
          b, loc,
          arith::MulIOp::create(b, loc, block,
                                arith::ConstantIndexOp::create(b, loc,
                                                               kBlockSize)),
          inner);
    } else {
      idx = linalg::IndexOp::create(b, loc, d + 1);
    }
    linear = arith::AddIOp::create(
        b, loc, linear, arith::MulIOp::create(b, loc, idx, strides[d]));
  }
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), linear);
}

/// Row-major strides of `tensor` as index values.
SmallVector<Value> rowMajorStrides(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<Value> strides(type.getRank());
  Value stride = arith::ConstantIndexOp::create(b, loc, 1);
  for (int64_t d = type.getRank() - 1; d >= 0; --d) {
    strides[d] = stride;
    stride = arith::MulIOp::create(b, loc, stride,
                                   tensor::DimOp::create(b, loc, tensor, d));
  }
  return strides;
}

/// The Philox word that stochastic rounding uses for the element with
/// row-major linear index `linear` (docs/Semantics.md section 5).
Value roundingWord(OpBuilder &b, Location loc, Value linear, Value seed,
                   Value counter) {
  Type i64 = b.getI64Type();
  Value group =
      arith::ShRUIOp::create(b, loc, linear, num::constant(b, loc, i64, 2));
  auto [g0, g1] = num::splitI64(b, loc, group);
  auto [n0, n1] = num::splitI64(b, loc, counter);
  auto [k0, k1] = num::splitI64(b, loc, seed);
  std::array<Value, 4> words = num::philox4x32x10(b, loc, {g0, g1, n0, n1},
                                                  {k0, k1});
  Value lane = arith::TruncIOp::create(
      b, loc, b.getI32Type(),
      arith::AndIOp::create(b, loc, linear, num::constant(b, loc, i64, 3)));
  Value word = words[3];
  for (int64_t i = 2; i >= 0; --i) {
    Value isLane = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         lane,
                                         num::constant(b, loc, b.getI32Type(),
                                                       i));
    word = arith::SelectOp::create(b, loc, isLane, words[i], word);
  }
  return word;
}

Value extendToF32(OpBuilder &b, Location loc, Value v) {
  if (v.getType().isF32())
    return v;
  return arith::ExtFOp::create(b, loc, b.getF32Type(), v);
}

struct QuantizeOpLowering : OpConversionPattern<QuantizeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(QuantizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    Value input = adaptor.getInput();
    int64_t axis = op.getAxis();
    int64_t rank = op.getInput().getType().getRank();
    Type i8 = b.getI8Type(), i32 = b.getI32Type();
    ScaleRule rule = op.getScaleRule();
    bool stochastic = op.getRounding() == Rounding::stochastic;

    Value blocked = expandAxis(b, loc, input, axis, kBlockSize);
    int64_t n = rank + 1;
    AffineMap all = b.getMultiDimIdentityMap(n);
    AffineMap perBlock = all.dropResult(axis + 1);
    SmallVector<OpFoldResult> scaleSizes = sizesWithout(b, loc, blocked,
                                                        axis + 1);

    // 1. The largest magnitude of each block, as its binary32 encoding: an
    // integer max of the sign-cleared bits orders finite values by magnitude
    // and puts Inf and NaN (>= 0x7F800000) above all of them.
    Value amaxInit = linalg::FillOp::create(
                         b, loc, ValueRange{num::constant(b, loc, i32, 0)},
                         ValueRange{emptyTensor(b, loc, scaleSizes, i32)})
                         .getResult(0);
    Value amax =
        linalg::GenericOp::create(
            b, loc, amaxInit.getType(), ValueRange{blocked},
            ValueRange{amaxInit}, ArrayRef<AffineMap>{all, perBlock},
            iterators(n, axis + 1),
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              Value bits = arith::AndIOp::create(
                  nb, nl, num::bitsOf(nb, nl, extendToF32(nb, nl, args[0])),
                  num::constant(nb, nl, i32, 0x7FFFFFFF));
              linalg::YieldOp::create(
                  nb, nl, ValueRange{arith::MaxSIOp::create(nb, nl, bits,
                                                            args[1])});
            })
            .getResult(0);

    // 2. One E8M0 byte per block.
    AffineMap scaleMap = b.getMultiDimIdentityMap(rank);
    Value scales =
        linalg::GenericOp::create(
            b, loc, RankedTensorType::get(
                        cast<RankedTensorType>(amax.getType()).getShape(), i8),
            ValueRange{amax}, ValueRange{emptyTensor(b, loc, scaleSizes, i8)},
            ArrayRef<AffineMap>{scaleMap, scaleMap}, iterators(rank, -1),
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              Value byte = num::scaleByte(nb, nl, args[0], rule);
              linalg::YieldOp::create(
                  nb, nl, ValueRange{arith::TruncIOp::create(nb, nl, i8, byte)});
            })
            .getResult(0);

    // 3. One E2M1 code per element.
    SmallVector<Value> strides;
    if (stochastic)
      strides = rowMajorStrides(b, loc, input);
    Value seed = adaptor.getSeed(), counter = adaptor.getCounter();
    auto blockedType = cast<RankedTensorType>(blocked.getType());
    Value codes =
        linalg::GenericOp::create(
            b, loc, RankedTensorType::get(blockedType.getShape(), i8),
            ValueRange{blocked, scales},
            ValueRange{emptyTensor(
                b, loc, tensor::getMixedSizes(b, loc, blocked), i8)},
            ArrayRef<AffineMap>{all, perBlock, all}, iterators(n, -1),
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              auto c = [&](int64_t v) { return num::constant(nb, nl, i32, v); };
              Value bits = num::bitsOf(nb, nl, extendToF32(nb, nl, args[0]));
              Value byte = arith::ExtUIOp::create(nb, nl, i32, args[1]);
              // 2^-s has exponent field 127 - s = 254 - byte, a normal f32
              // for every byte below 255.
              Value inverseScale = num::fromBits(
                  nb, nl,
                  arith::ShLIOp::create(
                      nb, nl, arith::SubIOp::create(nb, nl, c(254), byte),
                      c(23)));
              Value scaled = arith::MulFOp::create(
                  nb, nl, num::fromBits(nb, nl, bits), inverseScale);
              Value absA = num::fromBits(
                  nb, nl,
                  arith::AndIOp::create(nb, nl, num::bitsOf(nb, nl, scaled),
                                        c(0x7FFFFFFF)));
              Value magnitude;
              if (stochastic) {
                Value linear = linearIndex(nb, nl, axis, strides);
                Value word = roundingWord(nb, nl, linear, seed, counter);
                magnitude = num::roundStochastic(nb, nl, absA, word);
              } else {
                magnitude = num::roundNearestEven(nb, nl, absA);
              }
              Value sign = arith::ShLIOp::create(
                  nb, nl, arith::ShRUIOp::create(nb, nl, bits, c(31)), c(3));
              Value code = arith::OrIOp::create(nb, nl, sign, magnitude);
              Value nanBlock = arith::CmpIOp::create(
                  nb, nl, arith::CmpIPredicate::eq, byte, c(255));
              code = arith::SelectOp::create(nb, nl, nanBlock, c(0), code);
              linalg::YieldOp::create(
                  nb, nl, ValueRange{arith::TruncIOp::create(nb, nl, i8, code)});
            })
            .getResult(0);

    rewriter.replaceOp(op, {collapseAxis(b, loc, codes, axis), scales});
    return success();
  }
};

struct DequantizeOpLowering : OpConversionPattern<DequantizeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(DequantizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    int64_t axis = op.getAxis();
    int64_t n = op.getValues().getType().getRank() + 1;
    Type i32 = b.getI32Type();
    Type resultElement = op.getResult().getType().getElementType();

    Value blocked = expandAxis(b, loc, adaptor.getValues(), axis, kBlockSize);
    auto blockedType = cast<RankedTensorType>(blocked.getType());
    AffineMap all = b.getMultiDimIdentityMap(n);
    AffineMap perBlock = all.dropResult(axis + 1);
    Value result =
        linalg::GenericOp::create(
            b, loc, RankedTensorType::get(blockedType.getShape(), resultElement),
            ValueRange{blocked, adaptor.getScales()},
            ValueRange{emptyTensor(b, loc,
                                   tensor::getMixedSizes(b, loc, blocked),
                                   resultElement)},
            ArrayRef<AffineMap>{all, perBlock, all}, iterators(n, -1),
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              auto c = [&](int64_t v) { return num::constant(nb, nl, i32, v); };
              Value code = arith::ExtUIOp::create(nb, nl, i32, args[0]);
              Value byte = arith::ExtUIOp::create(nb, nl, i32, args[1]);
              Value magnitude = num::decodeE2M1Magnitude(
                  nb, nl, arith::AndIOp::create(nb, nl, code, c(7)));
              // Exact (or +Inf on overflow): a power of two times a value
              // with two significant bits.
              Value product = arith::MulFOp::create(
                  nb, nl, magnitude, num::decodeE8M0(nb, nl, byte));
              Value sign = arith::ShLIOp::create(
                  nb, nl, arith::AndIOp::create(nb, nl, code, c(8)), c(28));
              Value bits = arith::OrIOp::create(
                  nb, nl, num::bitsOf(nb, nl, product), sign);
              Value nanBlock = arith::CmpIOp::create(
                  nb, nl, arith::CmpIPredicate::eq, byte, c(255));
              bits = arith::SelectOp::create(nb, nl, nanBlock, c(0x7FC00000),
                                             bits);
              Value value = num::fromBits(nb, nl, bits);
              if (resultElement.isBF16())
                value = num::truncToBF16(nb, nl, value);
              linalg::YieldOp::create(nb, nl, ValueRange{value});
            })
            .getResult(0);
    rewriter.replaceOp(op, collapseAxis(b, loc, result, axis));
    return success();
  }
};

} // namespace

void mxfp4::populateQuantizeLoweringPatterns(const TypeConverter &converter,
                                             RewritePatternSet &patterns) {
  patterns.add<QuantizeOpLowering, DequantizeOpLowering>(
      converter, patterns.getContext());
}

//===- DequantizeToLinalg.cpp - dequantize to linalg ----------------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Lowers mxfp4.dequantize to one elementwise linalg.generic on a view of the
// tensor whose blocked axis is split into [blocks, 32], so each element reads
// the scale of its block (docs/Semantics.md section 3).
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"
#include "mxfp4/Dialect/MXFP4/Utils/Numerics.h"
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

void mxfp4::populateDequantizeLoweringPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<DequantizeOpLowering>(converter, patterns.getContext());
}

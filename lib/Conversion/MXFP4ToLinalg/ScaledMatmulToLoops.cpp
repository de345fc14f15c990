//===- ScaledMatmulToLoops.cpp - scaled_matmul to exact block sums --------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The reference lowering of mxfp4.scaled_matmul (docs/Semantics.md section
// 6): both operands are decoded to f32 once, every 32-element block dot
// product is formed exactly (products of E2M1 values and their sums are exact
// in f32, so the reduction order inside a block does not matter), scaled by
// 2^(sA + sB - 254) with a single rounding, and added to the f32 accumulator
// in increasing K order.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"
#include "mxfp4/Dialect/MXFP4/Utils/Numerics.h"
#include "TensorUtils.h"

#include "mxfp4/Dialect/MXFP4/IR/MXFP4Ops.h"
#include "mxfp4/Transforms/ParallelLoops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::mxfp4;
namespace num = mlir::mxfp4::numerics;

namespace {

/// An elementwise linalg.generic over a 2-D tensor.
Value mapElements(OpBuilder &b, Location loc, Value input, Type resultElement,
                  function_ref<Value(OpBuilder &, Location, Value)> fn) {
  auto type = cast<RankedTensorType>(input.getType());
  AffineMap id = b.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> par(type.getRank(),
                                       utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, RankedTensorType::get(type.getShape(), resultElement),
             ValueRange{input},
             ValueRange{emptyTensor(b, loc,
                                    tensor::getMixedSizes(b, loc, input),
                                    resultElement)},
             ArrayRef<AffineMap>{id, id}, par,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(nb, nl, ValueRange{fn(nb, nl, args[0])});
             })
      .getResult(0);
}

/// The signed value of an E2M1 code (i8) as f32, without its scale.
Value decodeCode(OpBuilder &b, Location loc, Value code8) {
  Type i32 = b.getI32Type();
  Value code = arith::ExtUIOp::create(b, loc, i32, code8);
  Value magnitude = num::decodeE2M1Magnitude(
      b, loc, arith::AndIOp::create(b, loc, code, num::constant(b, loc, i32, 7)));
  Value sign = arith::ShLIOp::create(
      b, loc, arith::AndIOp::create(b, loc, code, num::constant(b, loc, i32, 8)),
      num::constant(b, loc, i32, 28));
  return num::fromBits(
      b, loc, arith::OrIOp::create(b, loc, num::bitsOf(b, loc, magnitude), sign));
}

/// RNE_f32(blockSum * 2^(sA + sB - 254)), or NaN if either scale byte is NaN.
Value scaleBlockSum(OpBuilder &b, Location loc, Value blockSum, Value sa8,
                    Value sb8) {
  Type i64 = b.getI64Type();
  auto c = [&](int64_t v) { return num::constant(b, loc, i64, v); };
  Value sa = arith::ExtUIOp::create(b, loc, i64, sa8);
  Value sb = arith::ExtUIOp::create(b, loc, i64, sb8);
  // 2^(sa + sb - 254) is a normal f64 and the block sum has at most 13
  // significant bits, so the f64 product is exact and truncf rounds once.
  Value exponent = arith::AddIOp::create(
      b, loc, arith::AddIOp::create(b, loc, sa, sb), c(1023 - 254));
  Value scale = arith::BitcastOp::create(
      b, loc, b.getF64Type(), arith::ShLIOp::create(b, loc, exponent, c(52)));
  Value wide = arith::MulFOp::create(
      b, loc, arith::ExtFOp::create(b, loc, b.getF64Type(), blockSum), scale);
  Value scaled = arith::TruncFOp::create(b, loc, b.getF32Type(), wide);
  Value nanScale = arith::OrIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, sa, c(255)),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, sb, c(255)));
  Value nan = num::fromBits(b, loc,
                            num::constant(b, loc, b.getI32Type(), 0x7FC00000));
  return arith::SelectOp::create(b, loc, nanScale, nan, scaled);
}

struct ScaledMatmulOpLowering : OpConversionPattern<ScaledMatmulOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ScaledMatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    Type f32 = b.getF32Type();
    Type resultElement = op.getResult().getType().getElementType();
    int64_t k = op.getLhs().getType().getDimSize(1);

    Value lhs = mapElements(b, loc, adaptor.getLhs(), f32, decodeCode);
    Value rhs = mapElements(b, loc, adaptor.getRhs(), f32, decodeCode);
    Value lhsScale = adaptor.getLhsScale(), rhsScale = adaptor.getRhsScale();

    Value m = tensor::DimOp::create(b, loc, lhs, 0);
    Value n = tensor::DimOp::create(b, loc, rhs, 0);
    Value init;
    if (Value acc = adaptor.getAcc()) {
      init = resultElement.isF32()
                 ? acc
                 : mapElements(b, loc, acc, f32,
                               [](OpBuilder &nb, Location nl, Value v) {
                                 return arith::ExtFOp::create(
                                     nb, nl, nb.getF32Type(), v);
                               });
    } else {
      Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
      init = linalg::FillOp::create(
                 b, loc, ValueRange{zero},
                 ValueRange{emptyTensor(
                     b, loc,
                     {tensor::getMixedSize(b, loc, lhs, 0),
                      tensor::getMixedSize(b, loc, rhs, 0)},
                     f32)})
                 .getResult(0);
    }

    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value blocks = arith::ConstantIndexOp::create(b, loc, k / kBlockSize);
    Value blockSize = arith::ConstantIndexOp::create(b, loc, kBlockSize);
    auto blockType = VectorType::get({kBlockSize}, f32);
    bool inBounds[] = {true};
    scf::LoopNest nest = scf::buildLoopNest(
        b, loc, {zero, zero}, {m, n}, {one, one}, ValueRange{init},
        [&](OpBuilder &nb, Location nl, ValueRange ivs,
            ValueRange iterArgs) -> scf::ValueVector {
          Value row = ivs[0], col = ivs[1];
          Value start =
              tensor::ExtractOp::create(nb, nl, iterArgs[0], ValueRange{row, col});
          auto kLoop = scf::ForOp::create(
              nb, nl, zero, blocks, one, ValueRange{start},
              [&](OpBuilder &kb, Location kl, Value j, ValueRange acc) {
                Value offset = arith::MulIOp::create(kb, kl, j, blockSize);
                Value pad = arith::ConstantOp::create(kb, kl,
                                                      kb.getF32FloatAttr(0.0f));
                Value a = vector::TransferReadOp::create(
                    kb, kl, blockType, lhs, ValueRange{row, offset}, pad,
                    inBounds);
                Value bv = vector::TransferReadOp::create(
                    kb, kl, blockType, rhs, ValueRange{col, offset}, pad,
                    inBounds);
                // Every partial sum of a block is exact, so any association
                // gives the same bits: let the target reduce as a tree.
                // Starting from +0.0 makes a zero block sum +0.0 whatever
                // the signs of the products (docs/Semantics.md section 6).
                auto sum = vector::ReductionOp::create(
                    kb, kl, vector::CombiningKind::ADD,
                    arith::MulFOp::create(kb, kl, a, bv), pad);
                sum.setFastmath(arith::FastMathFlags::reassoc);
                Value sa = tensor::ExtractOp::create(kb, kl, lhsScale,
                                                     ValueRange{row, j});
                Value sb = tensor::ExtractOp::create(kb, kl, rhsScale,
                                                     ValueRange{col, j});
                Value next = arith::AddFOp::create(
                    kb, kl, acc[0], scaleBlockSum(kb, kl, sum, sa, sb));
                scf::YieldOp::create(kb, kl, ValueRange{next});
              });
          Value updated = tensor::InsertOp::create(
              nb, nl, kLoop.getResult(0), iterArgs[0], ValueRange{row, col});
          return {updated};
        });
    markParallel(nest.loops.front());
    Value result = nest.results.front();
    if (resultElement.isBF16())
      result = mapElements(b, loc, result, resultElement,
                           [](OpBuilder &nb, Location nl, Value v) {
                             return num::truncToBF16(nb, nl, v);
                           });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mxfp4::populateScaledMatmulLoweringPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<ScaledMatmulOpLowering>(converter, patterns.getContext());
}

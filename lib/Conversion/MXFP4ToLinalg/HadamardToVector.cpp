//===- HadamardToVector.cpp - hadamard to in-register butterflies ---------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Lowers mxfp4.hadamard to a loop nest over tiles. Each tile is read as one
// vector, rotated with vector.shuffle butterflies in the stage order that
// docs/Semantics.md section 4 fixes, and written back, so the result is
// bit-identical on every target and the data makes one trip through memory.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"
#include "mxfp4/Dialect/MXFP4/Utils/Numerics.h"
#include "mxfp4/Dialect/MXFP4/Utils/Rotation.h"
#include "TensorUtils.h"

#include "mxfp4/Dialect/MXFP4/IR/MXFP4Ops.h"
#include "mxfp4/Transforms/ParallelLoops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::mxfp4;
namespace num = mlir::mxfp4::numerics;

namespace {

struct HadamardOpLowering : OpConversionPattern<HadamardOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(HadamardOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    Value input = adaptor.getInput();
    auto type = cast<RankedTensorType>(input.getType());
    Type element = type.getElementType();
    int64_t rank = type.getRank(), axis = op.getAxis(), n = op.getSize();
    bool inverse = op.getInverse();

    Value signs;
    if (op.getKind() != HadamardKind::deterministic)
      signs = buildRotationSigns(b, loc, n, n, adaptor.getSeed(),
                                 adaptor.getStep());

    SmallVector<Value> lbs, ubs, steps;
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    for (int64_t d = 0; d < rank; ++d) {
      lbs.push_back(zero);
      ubs.push_back(tensor::DimOp::create(b, loc, input, d));
      steps.push_back(d == axis ? arith::ConstantIndexOp::create(b, loc, n)
                                : one);
    }
    Value init = emptyTensor(b, loc, tensor::getMixedSizes(b, loc, input),
                             element);
    AffineMap alongAxis =
        AffineMap::get(rank, 0, b.getAffineDimExpr(axis), b.getContext());
    auto tileType = VectorType::get({n}, element);
    bool inBounds[] = {true};

    scf::LoopNest nest = scf::buildLoopNest(
        b, loc, lbs, ubs, steps, ValueRange{init},
        [&](OpBuilder &nb, Location nl, ValueRange ivs,
            ValueRange iterArgs) -> scf::ValueVector {
          Value padding = arith::ConstantOp::create(
              nb, nl, nb.getZeroAttr(element));
          Value tile = vector::TransferReadOp::create(
              nb, nl, tileType, input, ivs, padding, alongAxis, inBounds);
          if (!element.isF32())
            tile = arith::ExtFOp::create(
                nb, nl, VectorType::get({n}, nb.getF32Type()), tile);
          tile = rotateTiles(nb, nl, tile, n, signs, inverse);
          if (!element.isF32())
            tile = num::truncToBF16(nb, nl, tile);
          Value written = vector::TransferWriteOp::create(
                              nb, nl, tile, iterArgs[0], ivs, alongAxis,
                              inBounds)
                              .getResult();
          return {written};
        });
    markParallel(nest.loops.front());
    rewriter.replaceOp(op, nest.results.front());
    return success();
  }
};

} // namespace

void mxfp4::populateHadamardLoweringPatterns(const TypeConverter &converter,
                                             RewritePatternSet &patterns) {
  patterns.add<HadamardOpLowering>(converter, patterns.getContext());
}

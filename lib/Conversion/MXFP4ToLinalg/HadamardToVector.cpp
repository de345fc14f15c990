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
#include "Numerics.h"
#include "TensorUtils.h"

#include "mxfp4/Dialect/MXFP4/IR/MXFP4Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cmath>

using namespace mlir;
using namespace mlir::mxfp4;
namespace num = mlir::mxfp4::numerics;

namespace {

/// The normalization 1/sqrt(n) rounded to f32 (exact for n = 16 and 64).
float normalization(int64_t n) {
  return static_cast<float>(1.0 / std::sqrt(static_cast<double>(n)));
}

/// The +-1.0 sign vector d of a random rotation (docs/Semantics.md section 5).
Value buildSigns(OpBuilder &b, Location loc, int64_t n, Value seed,
                 Value step) {
  Type i32 = b.getI32Type();
  Value all = num::constant(b, loc, i32, 0xFFFFFFFF);
  Value t = step ? step : num::constant(b, loc, b.getI64Type(), 0);
  auto [t0, t1] = num::splitI64(b, loc, t);
  auto [k0, k1] = num::splitI64(b, loc, seed);
  std::array<Value, 4> words =
      num::philox4x32x10(b, loc, {all, all, t0, t1}, {k0, k1});
  auto vecI32 = VectorType::get({n}, i32);
  SmallVector<Value> perLane;
  SmallVector<int32_t> shifts;
  for (int64_t j = 0; j < n; ++j) {
    perLane.push_back(words[j / 32]);
    shifts.push_back(j % 32);
  }
  Value lanes = vector::FromElementsOp::create(b, loc, vecI32, perLane);
  Value shifted = arith::ShRUIOp::create(
      b, loc, lanes,
      arith::ConstantOp::create(b, loc,
                                DenseElementsAttr::get(vecI32,
                                                       ArrayRef(shifts))));
  Value bit = arith::AndIOp::create(b, loc, shifted,
                                    num::constant(b, loc, vecI32, 1));
  Value signBits = arith::OrIOp::create(
      b, loc,
      arith::ShLIOp::create(b, loc, bit, num::constant(b, loc, vecI32, 31)),
      num::constant(b, loc, vecI32, 0x3F800000));
  return num::fromBits(b, loc, signBits);
}

/// Rotates one tile held in `v` (vector<n x f32>).
Value rotateTile(OpBuilder &b, Location loc, Value v, int64_t n, Value signs,
                 bool inverse) {
  if (signs && !inverse)
    v = arith::MulFOp::create(b, loc, v, signs);
  for (int64_t h = 1; h < n; h *= 2) {
    SmallVector<int64_t> lowMask, highMask, pick;
    for (int64_t i = 0; i < n; ++i) {
      bool upper = i & h;
      lowMask.push_back(upper ? i - h : i);
      highMask.push_back(upper ? i : i + h);
      pick.push_back(upper ? n + i : i);
    }
    Value low = vector::ShuffleOp::create(b, loc, v, v, lowMask);
    Value high = vector::ShuffleOp::create(b, loc, v, v, highMask);
    Value sum = arith::AddFOp::create(b, loc, low, high);
    Value diff = arith::SubFOp::create(b, loc, low, high);
    v = vector::ShuffleOp::create(b, loc, sum, diff, pick);
  }
  v = arith::MulFOp::create(
      b, loc, v, num::constantF32(b, loc, v.getType(), normalization(n)));
  if (signs && inverse)
    v = arith::MulFOp::create(b, loc, v, signs);
  return v;
}

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
      signs = buildSigns(b, loc, n, adaptor.getSeed(), adaptor.getStep());

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
          tile = rotateTile(nb, nl, tile, n, signs, inverse);
          if (!element.isF32())
            tile = num::truncToBF16(nb, nl, tile);
          Value written = vector::TransferWriteOp::create(
                              nb, nl, tile, iterArgs[0], ivs, alongAxis,
                              inBounds)
                              .getResult();
          return {written};
        });
    rewriter.replaceOp(op, nest.results.front());
    return success();
  }
};

} // namespace

void mxfp4::populateHadamardLoweringPatterns(const TypeConverter &converter,
                                             RewritePatternSet &patterns) {
  patterns.add<HadamardOpLowering>(converter, patterns.getContext());
}

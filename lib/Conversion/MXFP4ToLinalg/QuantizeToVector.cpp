//===- QuantizeToVector.cpp - quantize (+rotation) in one pass ------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// Lowers mxfp4.quantize to one loop nest that reads each 32-element block
// once as a vector, takes its amax with a vector reduction, derives the E8M0
// byte and rounds all 32 elements in registers (docs/Semantics.md section 2).
// When the input is an mxfp4.hadamard along the same axis, the rotation is
// applied to the loaded vector too (and rounded to bf16 where the hadamard's
// type says so), so a rotated quantization makes a single trip through
// memory: the fused Hadamard+quantize kernel of the paper's stack.
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

/// `v` (vector<L x bf16>) as f32 with its even elements first, then its odd
/// ones (evenOddLanes): a shift and a mask of each element pair, no
/// permutation.
Value toEvenOdd(OpBuilder &b, Location loc, Value v) {
  int64_t n = cast<VectorType>(v.getType()).getDimSize(0);
  auto halfType = VectorType::get({n / 2}, b.getI32Type());
  auto halfF32 = VectorType::get({n / 2}, b.getF32Type());
  Value pairs = vector::BitCastOp::create(b, loc, halfType, v);
  Value even =
      arith::ShLIOp::create(b, loc, pairs, num::constant(b, loc, halfType, 16));
  Value odd = arith::AndIOp::create(
      b, loc, pairs,
      num::constant(b, loc, halfType, static_cast<int64_t>(0xFFFF0000)));
  return vector::ShuffleOp::create(
      b, loc, vector::BitCastOp::create(b, loc, halfF32, even),
      vector::BitCastOp::create(b, loc, halfF32, odd),
      llvm::to_vector(llvm::seq<int64_t>(0, n)));
}

/// The codes of a block in even-odd lane order (vector<32xi32>, each < 16)
/// as bytes in element order: each even code and its odd neighbour form one
/// 16-bit word.
Value interleaveEvenOdd(OpBuilder &b, Location loc, Value codes) {
  int64_t n = cast<VectorType>(codes.getType()).getDimSize(0);
  auto half = [&](int64_t offset) {
    return vector::ExtractStridedSliceOp::create(
        b, loc, codes, ArrayRef<int64_t>{offset}, ArrayRef<int64_t>{n / 2},
        ArrayRef<int64_t>{1});
  };
  auto halfType = VectorType::get({n / 2}, b.getI32Type());
  Value words = arith::OrIOp::create(
      b, loc, half(0),
      arith::ShLIOp::create(b, loc, half(n / 2),
                            num::constant(b, loc, halfType, 8)));
  Value shorts = arith::TruncIOp::create(
      b, loc, VectorType::get({n / 2}, b.getI16Type()), words);
  return vector::BitCastOp::create(b, loc, VectorType::get({n}, b.getI8Type()),
                                   shorts);
}

/// The rotation a quantize absorbs from its producer.
struct AbsorbedRotation {
  int64_t size = 0;
  bool inverse = false;
  Value signs; // null for a deterministic rotation
  bool roundToBF16 = false;
};

struct QuantizeOpLowering : OpConversionPattern<QuantizeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(QuantizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    int64_t axis = op.getAxis();
    Type i8 = b.getI8Type(), i64 = b.getI64Type(), f32 = b.getF32Type();
    Value input = adaptor.getInput();

    // Absorb a rotation along the same axis: read its input instead. On a
    // bf16 input it runs on the tile's even elements, then its odd ones
    // (evenOddLanes): the widening then needs no permutation. An f32 input
    // keeps element order, where the split would cost what it saves.
    AbsorbedRotation rotation;
    SmallVector<int64_t> lanes;
    auto hadamard = op.getInput().getDefiningOp<HadamardOp>();
    if (hadamard && static_cast<int64_t>(hadamard.getAxis()) != axis)
      hadamard = nullptr;
    if (hadamard) {
      rotation.size = hadamard.getSize();
      rotation.inverse = hadamard.getInverse();
      rotation.roundToBF16 = !hadamard.getType().getElementType().isF32();
      input = rewriter.getRemappedValue(hadamard.getInput());
    }
    int64_t tile = std::max<int64_t>(kBlockSize, rotation.size);
    if (hadamard &&
        cast<RankedTensorType>(input.getType()).getElementType().isBF16())
      lanes = evenOddLanes(tile);
    if (hadamard && hadamard.getKind() != HadamardKind::deterministic) {
      Value step = hadamard.getStep()
                       ? rewriter.getRemappedValue(hadamard.getStep())
                       : Value();
      rotation.signs = buildRotationSigns(
          b, loc, rotation.size, tile,
          rewriter.getRemappedValue(hadamard.getSeed()), step, lanes);
    }
    auto type = cast<RankedTensorType>(input.getType());
    Type element = type.getElementType();
    int64_t rank = type.getRank();

    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, input);
    Value codesInit = emptyTensor(b, loc, sizes, i8);
    SmallVector<OpFoldResult> scaleSizes(sizes);
    scaleSizes[axis] = b.getIndexAttr(type.getDimSize(axis) / kBlockSize);
    Value scalesInit = emptyTensor(b, loc, scaleSizes, i8);

    // Row-major strides for the element indices of stochastic rounding.
    bool stochastic = op.getRounding() == Rounding::stochastic;
    SmallVector<Value> strides(rank);
    Value seed = adaptor.getSeed(), counter = adaptor.getCounter();
    if (stochastic) {
      Value stride = num::constant(b, loc, i64, 1);
      for (int64_t d = rank - 1; d >= 0; --d) {
        strides[d] = stride;
        Value dim = arith::IndexCastOp::create(
            b, loc, i64, tensor::DimOp::create(b, loc, input, d));
        stride = arith::MulIOp::create(b, loc, stride, dim);
      }
    }

    SmallVector<Value> lbs, ubs, steps;
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    for (int64_t d = 0; d < rank; ++d) {
      lbs.push_back(zero);
      ubs.push_back(tensor::DimOp::create(b, loc, input, d));
      steps.push_back(
          arith::ConstantIndexOp::create(b, loc, d == axis ? tile : 1));
    }
    AffineMap alongAxis =
        AffineMap::get(rank, 0, b.getAffineDimExpr(axis), b.getContext());
    bool inBounds[] = {true};
    ScaleRule rule = op.getScaleRule();

    // Each lane's element in a block.
    SmallVector<int64_t> blockElements =
        lanes.empty() ? llvm::to_vector(llvm::seq<int64_t>(0, kBlockSize))
                      : evenOddLanes(kBlockSize);

    scf::LoopNest nest = scf::buildLoopNest(
        b, loc, lbs, ubs, steps, ValueRange{codesInit, scalesInit},
        [&](OpBuilder &nb, Location nl, ValueRange ivs,
            ValueRange iterArgs) -> scf::ValueVector {
          Value padding =
              arith::ConstantOp::create(nb, nl, nb.getZeroAttr(element));
          Value v = vector::TransferReadOp::create(
              nb, nl, VectorType::get({tile}, element), input, ivs, padding,
              alongAxis, inBounds);
          if (!lanes.empty())
            v = toEvenOdd(nb, nl, v);
          else if (!element.isF32())
            v = arith::ExtFOp::create(nb, nl, VectorType::get({tile}, f32), v);
          if (rotation.size) {
            v = rotateTiles(nb, nl, v, rotation.size, rotation.signs,
                            rotation.inverse, lanes);
            // The hadamard's result is bf16: round as it would. A NaN may
            // become an infinity here, which quantizes the same (a NaN block).
            if (rotation.roundToBF16)
              v = num::roundToBF16InF32(nb, nl, v);
          }
          Value codes = iterArgs[0], scales = iterArgs[1];
          for (int64_t blk = 0; blk < tile / kBlockSize; ++blk) {
            Value block = v;
            if (tile != kBlockSize && lanes.empty()) {
              block = vector::ExtractStridedSliceOp::create(
                  nb, nl, v, ArrayRef<int64_t>{blk * kBlockSize},
                  ArrayRef<int64_t>{kBlockSize}, ArrayRef<int64_t>{1});
            } else if (tile != kBlockSize) {
              // The block's even elements, then its odd ones.
              SmallVector<int64_t> picked;
              for (int64_t parity = 0; parity < 2; ++parity)
                for (int64_t i = 0; i < kBlockSize / 2; ++i)
                  picked.push_back(parity * tile / 2 + blk * kBlockSize / 2 +
                                   i);
              block = vector::ShuffleOp::create(nb, nl, v, v, picked);
            }
            SmallVector<Value> index(ivs);
            index[axis] = arith::AddIOp::create(
                nb, nl, ivs[axis],
                arith::ConstantIndexOp::create(nb, nl, blk * kBlockSize));
            auto randomWords = [&]() -> Value {
              Value base = num::constant(nb, nl, i64, 0);
              for (int64_t d = 0; d < rank; ++d)
                base = arith::AddIOp::create(
                    nb, nl, base,
                    arith::MulIOp::create(
                        nb, nl,
                        arith::IndexCastOp::create(nb, nl, i64, index[d]),
                        strides[d]));
              auto vecI64 = VectorType::get({kBlockSize}, i64);
              Value iota = arith::ConstantOp::create(
                  nb, nl,
                  DenseElementsAttr::get(vecI64, ArrayRef(blockElements)));
              Value linear = arith::AddIOp::create(
                  nb, nl, vector::BroadcastOp::create(nb, nl, vecI64, base),
                  arith::MulIOp::create(nb, nl, iota,
                                        vector::BroadcastOp::create(
                                            nb, nl, vecI64, strides[axis])));
              return num::stochasticRoundingWords(nb, nl, linear, seed,
                                                  counter);
            };
            auto [code, byte32] = num::quantizeBlock(
                nb, nl, block, rule, stochastic ? randomWords() : Value());
            Value blockCodes =
                !lanes.empty()
                    ? interleaveEvenOdd(nb, nl, code)
                    : arith::TruncIOp::create(
                          nb, nl, VectorType::get({kBlockSize}, i8), code)
                          .getResult();
            Value byte = arith::TruncIOp::create(nb, nl, i8, byte32);
            codes = vector::TransferWriteOp::create(nb, nl, blockCodes, codes,
                                                    index, alongAxis, inBounds)
                        .getResult();
            SmallVector<Value> scaleIndex(ivs);
            scaleIndex[axis] = arith::AddIOp::create(
                nb, nl,
                arith::DivUIOp::create(
                    nb, nl, ivs[axis],
                    arith::ConstantIndexOp::create(nb, nl, kBlockSize)),
                arith::ConstantIndexOp::create(nb, nl, blk));
            scales = tensor::InsertOp::create(nb, nl, byte, scales, scaleIndex);
          }
          return {codes, scales};
        });
    markParallel(nest.loops.front());
    rewriter.replaceOp(op, nest.results);
    return success();
  }
};

} // namespace

void mxfp4::populateQuantizeToVectorPatterns(const TypeConverter &converter,
                                             RewritePatternSet &patterns) {
  patterns.add<QuantizeOpLowering>(converter, patterns.getContext());
}

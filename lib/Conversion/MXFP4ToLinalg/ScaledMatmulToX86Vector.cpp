//===- ScaledMatmulToX86Vector.cpp - scaled_matmul on vdpbf16ps -----------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The AVX-512 BF16 lowering of mxfp4.scaled_matmul. E2M1 values are exact in
// bf16, so the operands are decoded (without their scales) into bf16 panels:
// A as [M, K/2] pairs, B as [N/16, K/2, 16] pairs, the layout in which one
// vdpbf16ps (x86vector.avx512.dot) multiplies a broadcast A pair with 16 B
// columns. A 4x32 register tile sums each 32-element K block from zero; the
// block sum is exact (every partial sum is a multiple of 0.25 below 1152), and
// one fused multiply-add applies 2^(sA + sB - 254) and adds it to the f32
// accumulator. Blocks are visited in increasing K order, so the result is
// bit-identical to the reference order of docs/Semantics.md section 6 as long
// as every scaled block sum 2^(sA + sB - 254) * p is an f32 normal number or
// zero (see docs/Semantics.md, "CPU: AVX-512 BF16").
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"
#include "Numerics.h"
#include "TensorUtils.h"

#include "mxfp4/Dialect/MXFP4/IR/MXFP4Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::mxfp4;
namespace num = mlir::mxfp4::numerics;

namespace {

/// Rows and 16-lane column vectors of the register tile.
constexpr int64_t kTileRows = 4;
constexpr int64_t kTileVectors = 2;
constexpr int64_t kLanes = 16;
constexpr int64_t kTileCols = kTileVectors * kLanes;
constexpr int64_t kPairsPerBlock = kBlockSize / 2;

int64_t roundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

/// Pads a static 2-D tensor with `pad` up to `rows` x `cols`.
Value padTo(OpBuilder &b, Location loc, Value t, int64_t rows, int64_t cols,
            Value pad) {
  auto type = cast<RankedTensorType>(t.getType());
  if (type.getDimSize(0) == rows && type.getDimSize(1) == cols)
    return t;
  return tensor::createPadHighOp(type.clone({rows, cols}), t, pad,
                                 /*nofold=*/false, loc, b);
}

/// The bf16 encoding (in the low 16 bits of an i32) of an E2M1 code (i8).
Value codeToBF16Bits(OpBuilder &b, Location loc, Value code8) {
  Type i32 = b.getI32Type();
  auto c = [&](int64_t v) { return num::constant(b, loc, i32, v); };
  Value code = arith::ExtUIOp::create(b, loc, i32, code8);
  Value magnitude = num::decodeE2M1Magnitude(
      b, loc, arith::AndIOp::create(b, loc, code, c(7)));
  // E2M1 magnitudes have two significant bits: the top half of the f32
  // encoding is the exact bf16 encoding.
  Value bits = arith::ShRUIOp::create(b, loc, num::bitsOf(b, loc, magnitude),
                                      c(16));
  Value sign = arith::ShLIOp::create(
      b, loc, arith::AndIOp::create(b, loc, code, c(8)), c(12));
  return arith::OrIOp::create(b, loc, bits, sign);
}

/// 2^(byte - 127) as f32, NaN for byte 255.
Value scaleToF32(OpBuilder &b, Location loc, Value byte8) {
  Type i32 = b.getI32Type();
  Value byte = arith::ExtUIOp::create(b, loc, i32, byte8);
  Value isNaN = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, byte,
                                      num::constant(b, loc, i32, 255));
  return arith::SelectOp::create(
      b, loc, isNaN,
      num::fromBits(b, loc, num::constant(b, loc, i32, 0x7FC00000)),
      num::decodeE8M0(b, loc, byte));
}

/// A linalg.generic producing a tensor of `shape` x `element` whose body maps
/// the values of `inputs` (read through `maps`) with `fn`.
Value generate(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
               Type element, ValueRange inputs, ArrayRef<AffineMap> maps,
               function_ref<Value(OpBuilder &, Location, ValueRange)> fn) {
  SmallVector<AffineMap> allMaps(maps);
  allMaps.push_back(b.getMultiDimIdentityMap(shape.size()));
  SmallVector<utils::IteratorType> par(shape.size(),
                                       utils::IteratorType::parallel);
  Value init = tensor::EmptyOp::create(b, loc, shape, element);
  return linalg::GenericOp::create(
             b, loc, RankedTensorType::get(shape, element), inputs,
             ValueRange{init}, allMaps, par,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(
                   nb, nl, ValueRange{fn(nb, nl, args.drop_back())});
             })
      .getResult(0);
}

struct ScaledMatmulToX86Vector : OpConversionPattern<ScaledMatmulOp> {
  ScaledMatmulToX86Vector(const TypeConverter &converter, MLIRContext *context)
      : OpConversionPattern(converter, context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(ScaledMatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto lhsType = op.getLhs().getType(), rhsType = op.getRhs().getType();
    if (!lhsType.hasStaticShape() || !rhsType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "needs static shapes");
    Location loc = op.getLoc();
    OpBuilder &b = rewriter;
    MLIRContext *ctx = b.getContext();
    Type i8 = b.getI8Type(), i32 = b.getI32Type(), f32 = b.getF32Type();
    Type bf16 = b.getBF16Type();
    int64_t m = lhsType.getDimSize(0), n = rhsType.getDimSize(0);
    int64_t k = lhsType.getDimSize(1), blocks = k / kBlockSize, pairs = k / 2;
    int64_t mp = roundUp(m, kTileRows), np = roundUp(n, kTileCols);
    int64_t panels = np / kLanes;

    // Pad with code 0 (+0.0) and scale byte 127 (1.0): padded rows and
    // columns contribute exact zeros and are sliced away at the end.
    Value zero8 = num::constant(b, loc, i8, 0), one8 = num::constant(b, loc, i8, 127);
    Value lhs = padTo(b, loc, adaptor.getLhs(), mp, k, zero8);
    Value rhs = padTo(b, loc, adaptor.getRhs(), np, k, zero8);
    Value lhsScale = padTo(b, loc, adaptor.getLhsScale(), mp, blocks, one8);
    Value rhsScale = padTo(b, loc, adaptor.getRhsScale(), np, blocks, one8);

    AffineExpr d0 = getAffineDimExpr(0, ctx), d1 = getAffineDimExpr(1, ctx),
               d2 = getAffineDimExpr(2, ctx);
    auto pairOf = [&](Value lo, Value hi, OpBuilder &nb, Location nl) {
      Value low = codeToBF16Bits(nb, nl, lo);
      Value high = codeToBF16Bits(nb, nl, hi);
      return arith::OrIOp::create(
          nb, nl, low,
          arith::ShLIOp::create(nb, nl, high, num::constant(nb, nl, i32, 16)));
    };
    // A[m, kp] = (bf16(lhs[m, 2kp]), bf16(lhs[m, 2kp + 1])).
    Value aPairs = generate(
        b, loc, {mp, pairs}, i32, {lhs, lhs},
        {AffineMap::get(2, 0, {d0, d1 * 2}, ctx),
         AffineMap::get(2, 0, {d0, d1 * 2 + 1}, ctx)},
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          return pairOf(args[0], args[1], nb, nl);
        });
    // B[p, kp, lane] = the pair of column 16p + lane.
    Value bPairs = generate(
        b, loc, {panels, pairs, kLanes}, i32, {rhs, rhs},
        {AffineMap::get(3, 0, {d0 * kLanes + d2, d1 * 2}, ctx),
         AffineMap::get(3, 0, {d0 * kLanes + d2, d1 * 2 + 1}, ctx)},
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          return pairOf(args[0], args[1], nb, nl);
        });
    Value aScales = generate(
        b, loc, {mp, blocks}, f32, {lhsScale}, {b.getMultiDimIdentityMap(2)},
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          return scaleToF32(nb, nl, args[0]);
        });
    Value bScales = generate(
        b, loc, {panels, blocks, kLanes}, f32, {rhsScale},
        {AffineMap::get(3, 0, {d0 * kLanes + d2, d1}, ctx)},
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          return scaleToF32(nb, nl, args[0]);
        });

    // The f32 accumulator, padded.
    Value zeroF = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
    Value c;
    if (Value acc = adaptor.getAcc()) {
      if (!cast<RankedTensorType>(acc.getType()).getElementType().isF32())
        acc = generate(b, loc, {m, n}, f32, {acc},
                       {b.getMultiDimIdentityMap(2)},
                       [](OpBuilder &nb, Location nl, ValueRange args) {
                         return arith::ExtFOp::create(nb, nl, nb.getF32Type(),
                                                      args[0]);
                       });
      c = padTo(b, loc, acc, mp, np, zeroF);
    } else {
      c = linalg::FillOp::create(
              b, loc, ValueRange{zeroF},
              ValueRange{tensor::EmptyOp::create(b, loc,
                                                 ArrayRef<int64_t>{mp, np}, f32)})
              .getResult(0);
    }

    auto idx = [&](OpBuilder &nb, Location nl, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(nb, nl, v);
    };
    auto vecF32 = VectorType::get({kLanes}, f32);
    auto vecI32 = VectorType::get({kLanes}, i32);
    auto vecBF16 = VectorType::get({2 * kLanes}, bf16);
    bool inBounds[] = {true};
    Value zeroIdx = idx(b, loc, 0), oneIdx = idx(b, loc, 1);

    auto tileLoop = scf::buildLoopNest(
        b, loc, {zeroIdx, zeroIdx},
        {idx(b, loc, np / kTileCols), idx(b, loc, mp / kTileRows)},
        {oneIdx, oneIdx}, ValueRange{c},
        [&](OpBuilder &nb, Location nl, ValueRange ivs,
            ValueRange iterArgs) -> scf::ValueVector {
          Value colTile = ivs[0], rowTile = ivs[1];
          Value row0 = arith::MulIOp::create(nb, nl, rowTile,
                                             idx(nb, nl, kTileRows));
          Value col0 = arith::MulIOp::create(nb, nl, colTile,
                                             idx(nb, nl, kTileCols));
          Value panel0 = arith::MulIOp::create(nb, nl, colTile,
                                               idx(nb, nl, kTileVectors));
          SmallVector<Value> rows, cols, panelIdx;
          for (int64_t r = 0; r < kTileRows; ++r)
            rows.push_back(arith::AddIOp::create(nb, nl, row0, idx(nb, nl, r)));
          for (int64_t v = 0; v < kTileVectors; ++v) {
            cols.push_back(
                arith::AddIOp::create(nb, nl, col0, idx(nb, nl, v * kLanes)));
            panelIdx.push_back(
                arith::AddIOp::create(nb, nl, panel0, idx(nb, nl, v)));
          }
          Value pad = arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(0));
          SmallVector<Value> accs;
          for (int64_t r = 0; r < kTileRows; ++r)
            for (int64_t v = 0; v < kTileVectors; ++v)
              accs.push_back(vector::TransferReadOp::create(
                  nb, nl, vecF32, iterArgs[0], ValueRange{rows[r], cols[v]},
                  pad, inBounds));

          auto blockLoop = scf::ForOp::create(
              nb, nl, zeroIdx, idx(nb, nl, blocks), oneIdx, accs,
              [&](OpBuilder &kb, Location kl, Value j, ValueRange acc) {
                Value zeroVec = arith::ConstantOp::create(
                    kb, kl, DenseElementsAttr::get(vecF32, 0.0f));
                SmallVector<Value> sums(kTileRows * kTileVectors, zeroVec);
                Value pair0 = arith::MulIOp::create(kb, kl, j,
                                                    idx(kb, kl, kPairsPerBlock));
                Value padI = num::constant(kb, kl, i32, 0);
                for (int64_t p = 0; p < kPairsPerBlock; ++p) {
                  Value kp = arith::AddIOp::create(kb, kl, pair0, idx(kb, kl, p));
                  SmallVector<Value> bVec;
                  for (int64_t v = 0; v < kTileVectors; ++v)
                    bVec.push_back(vector::BitCastOp::create(
                        kb, kl, vecBF16,
                        vector::TransferReadOp::create(
                            kb, kl, vecI32, bPairs,
                            ValueRange{panelIdx[v], kp, zeroIdx}, padI,
                            inBounds)));
                  for (int64_t r = 0; r < kTileRows; ++r) {
                    Value aPair = tensor::ExtractOp::create(
                        kb, kl, aPairs, ValueRange{rows[r], kp});
                    Value aVec = vector::BitCastOp::create(
                        kb, kl, vecBF16,
                        vector::BroadcastOp::create(kb, kl, vecI32, aPair));
                    for (int64_t v = 0; v < kTileVectors; ++v) {
                      Value &sum = sums[r * kTileVectors + v];
                      sum = x86vector::DotBF16Op::create(kb, kl, vecF32, sum,
                                                         aVec, bVec[v]);
                    }
                  }
                }
                SmallVector<Value> next;
                for (int64_t r = 0; r < kTileRows; ++r) {
                  Value sa = vector::BroadcastOp::create(
                      kb, kl, vecF32,
                      tensor::ExtractOp::create(kb, kl, aScales,
                                                ValueRange{rows[r], j}));
                  for (int64_t v = 0; v < kTileVectors; ++v) {
                    Value sb = vector::TransferReadOp::create(
                        kb, kl, vecF32, bScales,
                        ValueRange{panelIdx[v], j, zeroIdx}, pad, inBounds);
                    Value scale = arith::MulFOp::create(kb, kl, sa, sb);
                    next.push_back(vector::FMAOp::create(
                        kb, kl, sums[r * kTileVectors + v], scale,
                        acc[r * kTileVectors + v]));
                  }
                }
                scf::YieldOp::create(kb, kl, next);
              });

          Value out = iterArgs[0];
          for (int64_t r = 0; r < kTileRows; ++r)
            for (int64_t v = 0; v < kTileVectors; ++v)
              out = vector::TransferWriteOp::create(
                        nb, nl, blockLoop.getResult(r * kTileVectors + v), out,
                        ValueRange{rows[r], cols[v]}, inBounds)
                        .getResult();
          return {out};
        });

    Value result = tileLoop.results.front();
    if (mp != m || np != n)
      result = tensor::ExtractSliceOp::create(
          b, loc, RankedTensorType::get({m, n}, f32), result,
          ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(m), b.getIndexAttr(n)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
    if (op.getResult().getType().getElementType().isBF16())
      result = generate(b, loc, {m, n}, bf16, {result},
                        {b.getMultiDimIdentityMap(2)},
                        [](OpBuilder &nb, Location nl, ValueRange args) {
                          return num::truncToBF16(nb, nl, args[0]);
                        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mxfp4::populateScaledMatmulToX86VectorPatterns(
    const TypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<ScaledMatmulToX86Vector>(converter, patterns.getContext());
}

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
#include "mxfp4/Dialect/MXFP4/Utils/Numerics.h"
#include "TensorUtils.h"

#include "mxfp4/Dialect/MXFP4/IR/MXFP4Ops.h"
#include "mxfp4/Transforms/ParallelLoops.h"

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

/// RNE_f32(p * 2^(sa + sb - 254)) for exact block sums `p` (vector<16xf32>)
/// and scale bytes `sa`, `sb` (vector<16xi32>), NaN where a byte is 255. The
/// exponent is split so that p * 2^ea is exact and normal (|p| lies in
/// [2^-2, 2^11)) and the multiplication by 2^eb rounds once; below 2^-250 both
/// the reference and this give zero.
Value scaleBlockSums(OpBuilder &b, Location loc, Value p, Value sa, Value sb) {
  Type t = sa.getType();
  auto c = [&](int64_t v) { return num::constant(b, loc, t, v); };
  auto clamp = [&](Value v, int64_t lo, int64_t hi) {
    return arith::MinSIOp::create(b, loc, arith::MaxSIOp::create(b, loc, v, c(lo)),
                                  c(hi));
  };
  auto pow2 = [&](Value e) {
    return num::fromBits(
        b, loc,
        arith::ShLIOp::create(b, loc, arith::AddIOp::create(b, loc, e, c(127)),
                              c(23)));
  };
  Value e = arith::SubIOp::create(b, loc, arith::AddIOp::create(b, loc, sa, sb),
                                  c(254));
  Value ea = clamp(e, -124, 127);
  Value eb = clamp(arith::SubIOp::create(b, loc, e, ea), -126, 127);
  Value scaled = arith::MulFOp::create(
      b, loc, arith::MulFOp::create(b, loc, p, pow2(ea)), pow2(eb));
  Value nanScale = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq, arith::MaxSIOp::create(b, loc, sa, sb),
      c(255));
  return arith::SelectOp::create(
      b, loc, nanScale,
      num::fromBits(b, loc, c(0x7FC00000)), scaled);
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

/// Per-block scale operands of the micro-kernel: A as [rows, blocks] i32,
/// B as [panels, blocks, 16] i32 (raw bytes, or pre-shifted exponents).
struct KernelScales {
  Value a, b;
};

/// True (i1) if every scale byte of both operands is finite and every
/// exponent sum sA + sB - 254 lies in [-100, 100].
Value scalesAreSafe(OpBuilder &b, Location loc, Value lhsScale,
                    Value rhsScale) {
  Type i32 = b.getI32Type();
  auto c = [&](int64_t v) { return num::constant(b, loc, i32, v); };
  auto scalar = RankedTensorType::get({}, i32);
  auto minMax = [&](Value scales) -> std::pair<Value, Value> {
    auto filled = [&](int64_t v) {
      return linalg::FillOp::create(
                 b, loc, ValueRange{c(v)},
                 ValueRange{tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{},
                                                    i32)})
          .getResult(0);
    };
    AffineMap all = b.getMultiDimIdentityMap(2);
    AffineMap none = AffineMap::get(2, 0, {}, b.getContext());
    auto reduce = linalg::GenericOp::create(
        b, loc, TypeRange{scalar, scalar}, ValueRange{scales},
        ValueRange{filled(255), filled(0)},
        ArrayRef<AffineMap>{all, none, none},
        SmallVector<utils::IteratorType>(2, utils::IteratorType::reduction),
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          Value v = arith::ExtUIOp::create(nb, nl, i32, args[0]);
          linalg::YieldOp::create(
              nb, nl,
              ValueRange{arith::MinSIOp::create(nb, nl, v, args[1]),
                         arith::MaxSIOp::create(nb, nl, v, args[2])});
        });
    return {tensor::ExtractOp::create(b, loc, reduce.getResult(0), ValueRange{}),
            tensor::ExtractOp::create(b, loc, reduce.getResult(1),
                                      ValueRange{})};
  };
  auto [aMin, aMax] = minMax(lhsScale);
  auto [bMin, bMax] = minMax(rhsScale);
  auto cmp = [&](arith::CmpIPredicate p, Value l, Value r) -> Value {
    return arith::CmpIOp::create(b, loc, p, l, r);
  };
  Value maxSum = arith::AddIOp::create(b, loc, aMax, bMax);
  Value minSum = arith::AddIOp::create(b, loc, aMin, bMin);
  Value ok = arith::AndIOp::create(
      b, loc, cmp(arith::CmpIPredicate::sle, maxSum, c(254 + 100)),
      cmp(arith::CmpIPredicate::sge, minSum, c(254 - 100)));
  ok = arith::AndIOp::create(b, loc, ok,
                             cmp(arith::CmpIPredicate::ne, aMax, c(255)));
  return arith::AndIOp::create(b, loc, ok,
                               cmp(arith::CmpIPredicate::ne, bMax, c(255)));
}

/// The loop nest over 4x32 tiles of the padded f32 result `c`. With `exact`,
/// each block sum is scaled by scaleBlockSums and added (`scales` are raw
/// bytes); otherwise by one fused multiply-add with 2^(sA + sB - 254) built
/// from the pre-shifted exponents in `scales`.
Value buildTiles(OpBuilder &b, Location loc, Value c, Value aPairs,
                 Value bPairs, KernelScales scales, bool exact) {
  Type i32 = b.getI32Type(), f32 = b.getF32Type(), bf16 = b.getBF16Type();
  auto cType = cast<RankedTensorType>(c.getType());
  int64_t mp = cType.getDimSize(0), np = cType.getDimSize(1);
  int64_t blocks =
      cast<RankedTensorType>(aPairs.getType()).getDimSize(1) / kPairsPerBlock;
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
          Value padI = num::constant(nb, nl, i32, 0);
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
                      kb, kl, vecI32,
                      tensor::ExtractOp::create(kb, kl, scales.a,
                                                ValueRange{rows[r], j}));
                  for (int64_t v = 0; v < kTileVectors; ++v) {
                    Value sb = vector::TransferReadOp::create(
                        kb, kl, vecI32, scales.b,
                        ValueRange{panelIdx[v], j, zeroIdx}, padI, inBounds);
                    Value sum = sums[r * kTileVectors + v];
                    Value a = acc[r * kTileVectors + v];
                    if (exact) {
                      // acc + c_j, the reference's rounding order.
                      next.push_back(arith::AddFOp::create(
                          kb, kl, a, scaleBlockSums(kb, kl, sum, sa, sb)));
                    } else {
                      Value scale = num::fromBits(
                          kb, kl, arith::AddIOp::create(kb, kl, sa, sb));
                      next.push_back(
                          vector::FMAOp::create(kb, kl, sum, scale, a));
                    }
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

    markParallel(tileLoop.loops.front());
    return tileLoop.results.front();
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

    // Exact scaling works for every scale byte; when all exponent sums
    // sA + sB - 254 lie in [-100, 100] and no byte is NaN, 2^(sA + sB - 254)
    // is a normal f32, every scaled block sum is exact, and one fused
    // multiply-add per block gives the same bits faster.
    auto widen = [&](int64_t bias, int64_t shift) {
      return [=](OpBuilder &nb, Location nl, ValueRange args) -> Value {
        Value v = arith::ExtUIOp::create(nb, nl, i32, args[0]);
        v = arith::AddIOp::create(nb, nl, v, num::constant(nb, nl, i32, bias));
        return arith::ShLIOp::create(nb, nl, v,
                                     num::constant(nb, nl, i32, shift));
      };
    };
    AffineMap aMap = b.getMultiDimIdentityMap(2);
    AffineMap bMap = AffineMap::get(3, 0, {d0 * kLanes + d2, d1}, ctx);
    SmallVector<int64_t> aShape = {mp, blocks}, bShape = {panels, blocks, kLanes};
    KernelScales exact{
        generate(b, loc, aShape, i32, {lhsScale}, {aMap}, widen(0, 0)),
        generate(b, loc, bShape, i32, {rhsScale}, {bMap}, widen(0, 0))};
    // (sA - 127) << 23 plus sB << 23 is the f32 encoding of 2^(sA+sB-254).
    KernelScales fast{
        generate(b, loc, aShape, i32, {lhsScale}, {aMap}, widen(-127, 23)),
        generate(b, loc, bShape, i32, {rhsScale}, {bMap}, widen(0, 23))};

    Value safe = scalesAreSafe(b, loc, lhsScale, rhsScale);
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{c.getType()}, safe,
                                  /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      scf::YieldOp::create(
          b, loc, buildTiles(b, loc, c, aPairs, bPairs, fast, /*exact=*/false));
      b.setInsertionPointToStart(ifOp.elseBlock());
      scf::YieldOp::create(
          b, loc, buildTiles(b, loc, c, aPairs, bPairs, exact, /*exact=*/true));
    }
    Value result = ifOp.getResult(0);
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

//===- VectorizeMatmuls.cpp - tile and vectorize f32 matmuls --------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::mxfp4 {
#define GEN_PASS_DEF_VECTORIZEMATMULSPASS
#include "mxfp4/Transforms/Passes.h.inc"
} // namespace mlir::mxfp4

using namespace mlir;

namespace {

/// Tile sizes (M, N, K): 8 rows x 2 AVX-512 vectors of f32, 16 steps of K.
constexpr int64_t kTileM = 8, kTileN = 32, kTileK = 16;

/// Tile sizes for `op`'s loops if every loop is static and divisible, else
/// an empty vector.
SmallVector<int64_t> tileSizesFor(linalg::LinalgOp op) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<int64_t> tiles;
  if (isa<linalg::MatmulOp>(op))
    tiles = {kTileM, kTileN, kTileK};
  else if (isa<linalg::BatchMatmulOp>(op))
    tiles = {1, kTileM, kTileN, kTileK};
  else
    return {};
  if (ranges.size() != tiles.size())
    return {};
  for (auto [range, tile] : llvm::zip_equal(ranges, tiles))
    if (ShapedType::isDynamic(range) || range % tile != 0)
      return {};
  for (Value operand : op->getOperands())
    if (!getElementTypeOrSelf(operand.getType()).isF32())
      return {};
  return tiles;
}

/// Rewrites a 2-D matmul whose operands are indexed transposed (the Fprop
/// form A * B^T, the Wgrad form A^T * B) into a plain matmul of explicitly
/// transposed operands: the O(n^2) copy is cheap next to the O(n^3)
/// product, and the vectorized plain form streams rows of B.
linalg::MatmulOp makePlain(IRRewriter &rewriter, linalg::MatmulOp op) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  MLIRContext *ctx = op.getContext();
  AffineExpr m = getAffineDimExpr(0, ctx), n = getAffineDimExpr(1, ctx),
             k = getAffineDimExpr(2, ctx);
  bool lhsT = maps[0] == AffineMap::get(3, 0, {k, m}, ctx);
  bool rhsT = maps[1] == AffineMap::get(3, 0, {n, k}, ctx);
  bool lhsPlain = maps[0] == AffineMap::get(3, 0, {m, k}, ctx);
  bool rhsPlain = maps[1] == AffineMap::get(3, 0, {k, n}, ctx);
  if ((lhsPlain && rhsPlain) || !(lhsT || lhsPlain) || !(rhsT || rhsPlain) ||
      maps[2] != AffineMap::get(3, 0, {m, n}, ctx))
    return op;
  rewriter.setInsertionPoint(op);
  auto transposed = [&](Value v) -> Value {
    auto type = cast<RankedTensorType>(v.getType());
    Value init = tensor::EmptyOp::create(
        rewriter, op.getLoc(),
        ArrayRef<int64_t>{type.getDimSize(1), type.getDimSize(0)},
        type.getElementType());
    return linalg::TransposeOp::create(rewriter, op.getLoc(), v, init,
                                       ArrayRef<int64_t>{1, 0})
        .getResult()[0];
  };
  Value lhs = op.getInputs()[0], rhs = op.getInputs()[1];
  if (lhsT)
    lhs = transposed(lhs);
  if (rhsT)
    rhs = transposed(rhs);
  auto plain = linalg::MatmulOp::create(rewriter, op.getLoc(),
                                        op.getResultTypes(),
                                        ValueRange{lhs, rhs}, op.getOutputs());
  rewriter.replaceOp(op, plain.getResults());
  return plain;
}

struct VectorizeMatmulsPass
    : mxfp4::impl::VectorizeMatmulsPassBase<VectorizeMatmulsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp function = getOperation();
    MLIRContext *context = &getContext();
    SmallVector<linalg::LinalgOp> targets;
    function.walk([&](linalg::LinalgOp op) {
      if (op.hasPureTensorSemantics() && !tileSizesFor(op).empty())
        targets.push_back(op);
    });

    IRRewriter rewriter(context);
    for (linalg::LinalgOp &op : targets)
      if (auto matmul = dyn_cast<linalg::MatmulOp>(op.getOperation()))
        op = makePlain(rewriter, matmul);
    for (linalg::LinalgOp op : targets) {
      SmallVector<int64_t> tiles = tileSizesFor(op);
      SmallVector<OpFoldResult> sizes;
      for (int64_t tile : tiles)
        sizes.push_back(rewriter.getIndexAttr(tile));
      auto tileable = dyn_cast<TilingInterface>(op.getOperation());
      if (!tileable)
        continue; // no tiling model registered: the loops handle it
      scf::SCFTilingOptions options;
      options.setTileSizes(sizes);
      rewriter.setInsertionPoint(op);
      FailureOr<scf::SCFTilingResult> tiled =
          scf::tileUsingSCF(rewriter, tileable, options);
      if (failed(tiled))
        continue; // the loop lowering still handles it
      rewriter.replaceOp(op, tiled->replacements);
      // Row tiles (batch tiles for batch_matmul) write disjoint outputs.
      if (!tiled->loops.empty())
        mxfp4::markParallel(tiled->loops.front());
      for (Operation *tile : tiled->tiledOps) {
        rewriter.setInsertionPoint(tile);
        FailureOr<linalg::VectorizationResult> vectorized =
            linalg::vectorize(rewriter, tile, /*inputVectorSizes=*/{},
                              /*inputScalableVecDims=*/{},
                              /*vectorizeNDExtract=*/false,
                              /*flatten1DDepthwiseConv=*/false,
                              /*assumeDynamicDimsMatchVecSizes=*/false,
                              /*createNamedContraction=*/true);
        if (succeeded(vectorized))
          rewriter.replaceOp(tile, vectorized->replacements);
      }
    }

    // vector.contract -> outer products -> broadcast + FMA.
    RewritePatternSet patterns(context);
    vector::populateVectorContractLoweringPatterns(
        patterns, vector::VectorContractLowering::OuterProduct);
    vector::populateVectorOuterProductLoweringPatterns(patterns);
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    vector::populateVectorBroadcastLoweringPatterns(patterns);
    vector::populateVectorTransposeLoweringPatterns(
        patterns, vector::VectorTransposeLowering::EltWise);
    if (failed(applyPatternsGreedily(function, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

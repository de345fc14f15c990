//===- RoundGemmResults.cpp - GEMM results stored as bf16 -----------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Transforms/Passes.h"

#include "mxfp4/Dialect/MXFP4/IR/MXFP4Ops.h"
#include "mxfp4/Dialect/MXFP4/Transforms/Composites.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::mxfp4 {
#define GEN_PASS_DEF_ROUNDGEMMRESULTSPASS
#include "mxfp4/Transforms/Passes.h.inc"
} // namespace mlir::mxfp4

using namespace mlir;

/// Whether `g` only adds its inputs: a GEMM result that is a term of such a
/// sum keeps f32, so that the sum can become the GEMM's accumulator.
static bool isSum(linalg::GenericOp g) {
  return llvm::all_of(g.getBody()->without_terminator(),
                      [](Operation &op) { return isa<arith::AddFOp>(op); });
}

/// Whether every reader of `result` is an all-parallel linalg.generic that
/// takes it as an input, none of them a sum.
static bool onlyElementwiseReaders(Value result) {
  if (result.use_empty())
    return false;
  return llvm::all_of(result.getUses(), [](OpOperand &use) {
    auto g = dyn_cast<linalg::GenericOp>(use.getOwner());
    return g && g.isDpsInput(&use) &&
           g.getNumParallelLoops() == g.getNumLoops() && !isSum(g);
  });
}

namespace {

struct RoundGemmResultsPass
    : mxfp4::impl::RoundGemmResultsPassBase<RoundGemmResultsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    // A composite's body is its reference decomposition: f32 as written.
    if (func->hasAttr(mxfp4::kCompositeAttrName))
      return;
    func.walk([&](mxfp4::ScaledMatmulOp op) {
      auto type = cast<RankedTensorType>(op.getType());
      if (op.getAcc() || !type.getElementType().isF32() ||
          !onlyElementwiseReaders(op.getResult()))
        return;
      Type bf16 = Builder(op).getBF16Type();
      op.getResult().setType(type.clone(bf16));
      // Each reader widens its element where it reads it.
      for (OpOperand &use : op.getResult().getUses()) {
        auto g = cast<linalg::GenericOp>(use.getOwner());
        BlockArgument arg = g.getMatchingBlockArgument(&use);
        arg.setType(bf16);
        OpBuilder b = OpBuilder::atBlockBegin(g.getBody());
        Value wide = arith::ExtFOp::create(b, op.getLoc(), b.getF32Type(), arg);
        arg.replaceAllUsesExcept(wide, wide.getDefiningOp());
      }
    });
  }
};

} // namespace

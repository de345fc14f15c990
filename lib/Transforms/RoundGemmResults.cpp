//===- RoundGemmResults.cpp - GEMM results stored as bf16 -----------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Transforms/Passes.h"

#include "ElementConversion.h"

#include "mxfp4/Dialect/MXFP4/IR/MXFP4Ops.h"
#include "mxfp4/Dialect/MXFP4/Transforms/Composites.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

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

/// Collects the readers of `value`, looking through reshapes (which keep
/// the elements' order) into `reshapes`: true if every one is an
/// all-parallel linalg.generic that takes it as an input, none of them a
/// sum.
static bool collectElementwiseReaders(Value value,
                                      SmallVectorImpl<OpOperand *> &readers,
                                      SmallVectorImpl<Operation *> &reshapes) {
  if (value.use_empty())
    return false;
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(user)) {
      reshapes.push_back(user);
      if (!collectElementwiseReaders(user->getResult(0), readers, reshapes))
        return false;
      continue;
    }
    auto g = dyn_cast<linalg::GenericOp>(user);
    if (!g || !g.isDpsInput(&use) ||
        g.getNumParallelLoops() != g.getNumLoops() || isSum(g))
      return false;
    readers.push_back(&use);
  }
  return true;
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
    // Collected first: rewriting erases readers the walk would visit.
    SmallVector<mxfp4::ScaledMatmulOp> gemms;
    func.walk([&](mxfp4::ScaledMatmulOp op) { gemms.push_back(op); });
    for (mxfp4::ScaledMatmulOp op : gemms) {
      SmallVector<OpOperand *> readers;
      SmallVector<Operation *> reshapes;
      if (op.getAcc() || !op.getType().getElementType().isF32() ||
          !collectElementwiseReaders(op.getResult(), readers, reshapes))
        continue;
      Type bf16 = Builder(op).getBF16Type();
      auto toBF16 = [&](Value v) {
        v.setType(cast<RankedTensorType>(v.getType()).clone(bf16));
      };
      toBF16(op.getResult());
      for (Operation *reshape : reshapes)
        toBF16(reshape->getResult(0));
      // Each reader widens its element where it reads it; a reader that
      // only rounded the result to bf16 goes (it reads the result once, so
      // no later entry of `readers` is its).
      for (OpOperand *use : readers)
        mxfp4::widenInReader(cast<linalg::GenericOp>(use->getOwner()), *use);
    }
  }
};

} // namespace

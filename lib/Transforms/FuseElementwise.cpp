//===- FuseElementwise.cpp - fuse chains of elementwise generics ----------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::mxfp4 {
#define GEN_PASS_DEF_FUSEELEMENTWISEPASS
#include "mxfp4/Transforms/Passes.h.inc"
} // namespace mlir::mxfp4

using namespace mlir;

namespace {

struct FuseElementwisePass
    : mxfp4::impl::FuseElementwisePassBase<FuseElementwisePass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // Only generic into generic, and only a producer nothing else reads:
    // named ops (matmuls, fills, transposes) keep their form for the
    // kernels that recognize them, and no value is computed twice.
    linalg::ControlFusionFn control = [](OpOperand *operand) {
      Operation *producer = operand->get().getDefiningOp();
      return isa_and_nonnull<linalg::GenericOp>(producer) &&
             isa<linalg::GenericOp>(operand->getOwner()) &&
             producer->hasOneUse();
    };
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

//===- ParallelizeLoops.cpp - marked scf.for to scf.parallel --------------===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::mxfp4 {
#define GEN_PASS_DEF_PARALLELIZELOOPSPASS
#include "mxfp4/Transforms/Passes.h.inc"
} // namespace mlir::mxfp4

using namespace mlir;

namespace {

struct ParallelizeLoopsPass
    : mxfp4::impl::ParallelizeLoopsPassBase<ParallelizeLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) {
      if (!loop->hasAttr(mxfp4::kParallelLoopAttrName) ||
          !loop.getInitArgs().empty())
        return;
      // Only outermost marked loops: nested parallel regions would only add
      // scheduling overhead on top of the outer one.
      for (auto outer = loop->getParentOfType<scf::ForOp>(); outer;
           outer = outer->getParentOfType<scf::ForOp>())
        if (outer->hasAttr(mxfp4::kParallelLoopAttrName))
          return;
      loops.push_back(loop);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ForOp loop : loops) {
      rewriter.setInsertionPoint(loop);
      auto parallel = scf::ParallelOp::create(
          rewriter, loop.getLoc(), ValueRange{loop.getLowerBound()},
          ValueRange{loop.getUpperBound()}, ValueRange{loop.getStep()});
      Block *body = parallel.getBody();
      rewriter.setInsertionPointToStart(body);
      IRMapping mapping;
      mapping.map(loop.getInductionVar(), parallel.getInductionVars()[0]);
      for (Operation &op : loop.getBody()->without_terminator())
        rewriter.clone(op, mapping);
      rewriter.eraseOp(loop);
    }
  }
};

} // namespace

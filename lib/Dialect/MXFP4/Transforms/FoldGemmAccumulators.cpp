//===- FoldGemmAccumulators.cpp - x + scaled_matmul as its accumulator ----===//
//
// Part of the mxfp4 project, under the Apache License v2.0 with LLVM
// Exceptions. SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "mxfp4/Dialect/MXFP4/IR/MXFP4Ops.h"
#include "mxfp4/Dialect/MXFP4/Transforms/Passes.h"

#include "mlir/IR/Dominance.h"

namespace mlir::mxfp4 {
#define GEN_PASS_DEF_FOLDGEMMACCUMULATORSPASS
#include "mxfp4/Dialect/MXFP4/Transforms/Passes.h.inc"
} // namespace mlir::mxfp4

using namespace mlir;
using namespace mlir::mxfp4;

/// Whether `g` is an elementwise f32 sum of its inputs, added from the
/// left: ((in0 + in1) + in2) + ..., each addition without fast-math flags.
static bool isLeftFoldSum(linalg::GenericOp g) {
  int64_t n = g.getNumDpsInputs();
  if (n < 2 || g.getNumResults() != 1 || g.getNumDpsInits() != 1 ||
      g.getNumParallelLoops() != g.getNumLoops() ||
      !llvm::all_of(g.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }) ||
      llvm::any_of(g.getDpsInputs(),
                   [&](Value v) { return v.getType() != g.getType(0); }))
    return false;
  Block *body = g.getBody();
  if (static_cast<int64_t>(body->getOperations().size()) != n)
    return false;
  Value partial = body->getArgument(0);
  int64_t next = 1;
  for (Operation &op : body->without_terminator()) {
    auto add = dyn_cast<arith::AddFOp>(&op);
    Value term = body->getArgument(next++);
    if (!add || add.getFastmath() != arith::FastMathFlags::none ||
        !((add.getLhs() == partial && add.getRhs() == term) ||
          (add.getLhs() == term && add.getRhs() == partial)))
      return false;
    partial = add.getResult();
  }
  return body->getTerminator()->getOperand(0) == partial;
}

/// The elementwise f32 sum that is the only reader of `op`'s C, with C in
/// its first addition `x + C` (or `C + x`), and that x, where x dominates
/// `op` (the GEMM reads it); else {}.
static std::pair<linalg::GenericOp, Value> matchSum(ScaledMatmulOp op,
                                                    DominanceInfo &dominance) {
  Value c = op.getResult();
  if (op.getAcc() || !c.hasOneUse() || !op.getType().getElementType().isF32())
    return {};
  auto g = dyn_cast<linalg::GenericOp>(*c.getUsers().begin());
  if (!g || !isLeftFoldSum(g) || g.getType(0) != c.getType())
    return {};
  SmallVector<Value> inputs = g.getDpsInputs();
  if (inputs[0] != c && inputs[1] != c)
    return {};
  Value x = inputs[inputs[0] == c ? 1 : 0];
  if (!dominance.properlyDominates(x, op))
    return {};
  return {g, x};
}

/// The rest of the sum `g` once its first addition has become `first`:
/// ((first + in2) + in3) + ..., a new generic in g's place.
static linalg::GenericOp peelFirstAddition(OpBuilder &b, linalg::GenericOp g,
                                           Value first) {
  SmallVector<Value> inputs = {first};
  llvm::append_range(inputs, ArrayRef(g.getDpsInputs()).drop_front(2));
  SmallVector<AffineMap> maps(inputs.size() + 1,
                              g.getIndexingMapsArray().front());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(g);
  return linalg::GenericOp::create(
      b, g.getLoc(), g.getResultTypes(), inputs, g.getDpsInits(), maps,
      g.getIteratorTypesArray(),
      [&](OpBuilder &nb, Location loc, ValueRange args) {
        Value partial = args[0];
        for (Value term : args.drop_front().drop_back())
          partial = arith::AddFOp::create(nb, loc, partial, term);
        linalg::YieldOp::create(nb, loc, partial);
      });
}

namespace {

struct FoldGemmAccumulatorsPass
    : mxfp4::impl::FoldGemmAccumulatorsPassBase<FoldGemmAccumulatorsPass> {
  void runOnOperation() override {
    OpBuilder b(&getContext());
    DominanceInfo dominance(getOperation());
    // In program order, so that a sum's rest, which reads the GEMM that
    // took its first addition, is there when a later GEMM of the sum looks.
    SmallVector<ScaledMatmulOp> gemms;
    getOperation().walk([&](ScaledMatmulOp op) { gemms.push_back(op); });
    for (ScaledMatmulOp op : gemms) {
      auto [sum, x] = matchSum(op, dominance);
      if (!sum)
        continue;
      // f32 addition commutes: C's GEMM computing x + C gives the sum's
      // first addition bit for bit.
      op.getAccMutable().assign(x);
      Value result = op.getResult();
      if (sum.getNumDpsInputs() > 2)
        result = peelFirstAddition(b, sum, result).getResult(0);
      sum.getResult(0).replaceAllUsesWith(result);
      sum->erase();
    }
  }
};

} // namespace
